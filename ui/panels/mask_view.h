#pragma once
// The attention-mask panel: a heatmap of the mask the drafter ran with for the selected
// block (or any block set by hand: the mask explainer), in the inference or the training
// layout, for one variant or the difference of two. Hovering names the query slot, the key
// position and its token, and why the cell is or is not allowed.

#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>
#include <string>

#include <QWidget>

#include "session/session_viewer.h"
#include "models/mask_layout.h"
#include "dfi/analysis/response_sequence.h"
#include "widgets/view_export.h"

class QLabel;
class QPushButton;
class QCPItemStraightLine;
class QCPTextElement;
class QCPGraph;

namespace dfi::ui {

class HeatmapPlot;
class MaskControls;

class MaskView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  // `context` may be null: the view is then only the explainer.
  explicit MaskView(SessionContext* context, QWidget* parent = nullptr);
  ~MaskView() override;

  MaskControls* controls() const { return controls_; }
  HeatmapPlot* plot() const { return plot_; }
  const MaskLayout* maskLayout() const { return layout_.get(); }
  QString hoverText() const;
  // The cells that differ in a diff (row, column), outlined on the picture so a few of them
  // stay visible among 59 blocks x 16 slots; empty when not a diff or past kMaxOutlined.
  const std::vector<std::pair<std::int64_t, std::int64_t>>& differingCells() const { return differing_; }
  static constexpr std::int64_t kMaxOutlined = 50000;
  // Zooms both axes onto the differing cells of the first block that has any (the whole
  // difference in the inference layout); false when nothing differs.
  bool zoomToDifferences();
  QPushButton* zoomButton() const { return zoomToDifferences_; }
  QString describeCell(std::int64_t row, std::int64_t column) const;

  // Colours of the cell values, for the legend and for tests of the picture.
  static QColor colour(bool diff, int value);

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override;
  QString exportBaseName() const override;
  CsvTable exportData() override;  // every cell; a UsageError past 4M cells

 private:
  void buildPlotDecorations();
  void rebuild();
  void loadResponse(const Selection& selection);
  MaskScene currentScene() const;
  std::int64_t responseLength() const;
  void updateLegend(bool diff);
  void outlineDifferences();
  static constexpr std::int64_t kMaxDiffScan = std::int64_t{4} << 20;
  QString tokenAt(std::int64_t position) const;
  QString blockKeyText(const MaskCellInfo& info) const;

  SessionContext* context_;
  MaskControls* controls_;
  HeatmapPlot* plot_;
  QLabel* hover_;
  QCPTextElement* title_ = nullptr;
  QCPItemStraightLine* boundary_ = nullptr;
  QCPGraph* legendEntries_[3] = {};
  QCPGraph* outlines_ = nullptr;
  QPushButton* zoomToDifferences_;
  QPushButton* showAll_;
  std::vector<std::pair<std::int64_t, std::int64_t>> differing_;
  std::shared_ptr<const MaskLayout> layout_;

  // The selected block and its response, when a session is open.
  std::optional<session::StepRecord> step_;
  int runBlockSize_ = 0;
  // The run's drafter's causality as the engine reads its config (DrafterConfig::isCausal: z-lab's
  // is_causal, speculators' sliding_window_non_causal): absent, a block is causal exactly in
  // sliding layers; present, in every layer (true) or none (false).
  std::optional<bool> runCausal_;
  bool runWindowFromAnchor_ = false;  // a diagnose window-from:anchor run: the window as speculators trains
  Selection loadedResponse_;  // run and prompt of sequence_
  analysis::ResponseSequence sequence_;
  std::vector<std::int64_t> responseAnchors_;
  std::set<std::string> unknownVariants_;  // already reported in the log
};

}  // namespace dfi::ui
