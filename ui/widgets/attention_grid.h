#pragma once
// A layer x head grid of attention thumbnails (one row per drafter layer, one column per head,
// then the mean and the max over heads), heads of one GQA group (sharing a kv head) bracketed
// together. Each thumbnail is max-pooled over keys to its width and scaled to its own maximum,
// so a head's pattern shows whatever its range. Clicking one chooses it.

#include <vector>

#include <QImage>
#include <QWidget>

#include "models/block_probes.h"

namespace dfi::ui {

class AttentionGrid : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMean = -1;  // the "head" of the mean-over-heads column
  static constexpr int kMax = -2;   // the max-over-heads column

  explicit AttentionGrid(QWidget* parent = nullptr);

  void setLayers(const std::vector<AttentionLayer>& layers, int headsPerKvHead);
  void setCurrent(int layer, int head);
  int headsPerKvHead() const { return group_; }
  QSize sizeHint() const override;
  // The thumbnail rectangle of (layer row, head), for tests.
  QRect thumbnailRect(int row, int head) const;

  // The colour of a value in [0, 1] (shared with the attention heatmap).
  static QColor colour(double value);
  static QColor maskedColour() { return {200, 200, 200}; }  // probability exactly 0

 signals:
  void chosen(int layer, int head);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  int columnOf(int head) const;  // column index of a head (kMean/kMax after the heads)
  int xOf(int column) const;

  std::vector<int> layerIds_;
  std::vector<std::vector<QImage>> images_;  // [row][column]
  int heads_ = 0;
  int group_ = 1;
  int currentLayer_ = -1;
  int currentHead_ = kMean;
};

}  // namespace dfi::ui
