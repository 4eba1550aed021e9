#pragma once
// The attention panel (issue 9, item 1): for the selected block, the drafter's attention
// probabilities of one layer and head (or the mean / max over heads) over [context | block]
// keys with token labels, on a HeatmapPlot that resamples to the viewport (long contexts),
// beside a layer x head thumbnail grid with the GQA groups bracketed. The data come from the
// session (tensors "drafter.layers.<l>.attn.probs" of the step); when the session has none,
// "Fetch from engine" sends an inspect request to `dflash-eval serve` and stores the answer
// into the session, so the block needs no engine next time.

#include <vector>

#include <QColor>

#include "panels/block_probe_panel.h"

class QComboBox;
class QCPColorGradient;
class QCPItemStraightLine;
class QScrollArea;

namespace dfi::ui {

class AttentionGrid;
class HeatmapPlot;

class AttentionView : public BlockProbePanel {
  Q_OBJECT
 public:
  explicit AttentionView(SessionContext* context, QWidget* parent = nullptr);

  HeatmapPlot* plot() const { return plot_; }
  AttentionGrid* grid() const { return grid_; }
  int layer() const { return layer_; }
  int head() const { return head_; }  // AttentionGrid::kMean / kMax for the summaries
  void choose(int layer, int head);
  static QColor maskedColour();  // keys with probability exactly 0 (masked)
  // Probability colours; cells holding NaN (a probability of exactly 0) are drawn masked.
  static QCPColorGradient gradient();

  QString exportBaseName() const override { return QStringLiteral("attention"); }
  CsvTable exportData() override;  // the shown map: one row per query slot, one column per key

 protected:
  void loadSelection() override;
  void showAnswer(const InspectAnswer& answer) override;

 private:
  void reload();
  void showMap();
  QString keyLabel(std::int64_t key) const;
  std::vector<float> currentMap() const;
  const AttentionLayer* currentLayer() const;

  QComboBox* layerBox_;
  QComboBox* headBox_;
  HeatmapPlot* plot_;
  AttentionGrid* grid_;
  QScrollArea* gridScroll_ = nullptr;
  QCPItemStraightLine* boundary_ = nullptr;
  std::vector<std::int64_t> sequence_;  // token ids by position, as far as the records go
  int headsPerKv_ = 1;
  int layer_ = 0;
  int head_ = -1;
  bool updatingBoxes_ = false;
};

}  // namespace dfi::ui
