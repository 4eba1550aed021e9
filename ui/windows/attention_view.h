#pragma once
// The attention panel (issue 9, item 1): for the selected block, the drafter's attention
// probabilities of one layer and head (or the mean / max over heads) over [context | block]
// keys with token labels, on a HeatmapPlot that resamples to the viewport (long contexts),
// beside a layer x head thumbnail grid with the GQA groups bracketed. The data come from the
// session (tensors "drafter.layers.<l>.attn.probs" of the step); when the session has none,
// "Fetch from engine" sends an inspect request to `dflash-eval serve` and stores the answer
// into the session, so the block needs no engine next time.

#include <optional>
#include <vector>

#include <QColor>
#include <QWidget>

#include "context/session_viewer.h"
#include "models/block_probes.h"
#include "widgets/view_export.h"

class QComboBox;
class QCPItemStraightLine;
class QScrollArea;
class QLabel;
class QPushButton;

namespace dfi::ui {

class AttentionGrid;
class HeatmapPlot;
class InspectClient;
struct InspectAnswer;

class AttentionView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit AttentionView(SessionContext* context, InspectClient* engine = nullptr, QWidget* parent = nullptr);
  ~AttentionView() override;

  HeatmapPlot* plot() const { return plot_; }
  AttentionGrid* grid() const { return grid_; }
  QPushButton* fetchButton() const { return fetch_; }
  QString headline() const;
  QString status() const;
  int layer() const { return layer_; }
  int head() const { return head_; }  // AttentionGrid::kMean / kMax for the summaries
  void choose(int layer, int head);
  static QColor maskedColour();  // keys with probability exactly 0 (masked)
  const BlockProbes& probes() const { return probes_; }

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;

  QWidget* exportTarget() override;
  QString exportBaseName() const override { return QStringLiteral("attention"); }
  CsvTable exportData() override;  // the shown map: one row per query slot, one column per key

 public slots:
  void fetchFromEngine();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void loadSelection();  // reads selection_'s block
  // In a shown window but not shown itself (a tab behind another): loading can wait. A view
  // never shown (headless render, tests) loads at once.
  bool behindAnotherTab() const { return window()->isVisible() && !isVisible(); }
  void reload();
  void showAnswer(const InspectAnswer& answer);
  void showMap();
  QString keyLabel(std::int64_t key) const;
  std::vector<float> currentMap() const;
  const AttentionLayer* currentLayer() const;

  SessionContext* context_;
  InspectClient* engine_;
  QLabel* headline_;
  QComboBox* layerBox_;
  QComboBox* headBox_;
  QPushButton* fetch_;
  QLabel* status_;
  HeatmapPlot* plot_;
  AttentionGrid* grid_;
  QScrollArea* gridScroll_ = nullptr;
  QCPItemStraightLine* boundary_ = nullptr;
  Selection selection_;
  std::optional<session::StepRecord> step_;
  std::vector<std::int64_t> sequence_;  // token ids by position, as far as the records go
  BlockProbes probes_;
  int headsPerKv_ = 1;
  int layer_ = 0;
  int head_ = -1;
  bool updatingBoxes_ = false;
  bool stale_ = false;  // selection_ changed while hidden: read it when shown
};

}  // namespace dfi::ui
