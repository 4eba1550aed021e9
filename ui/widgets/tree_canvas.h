#pragma once
// Draws a TreeLayout: one lane per depth with the target's token at that depth in its header,
// each node a box with its token and probability, edges from parent to child, the accepted
// path in the accepted colour. Sized to the whole tree (put it in a scroll area), so that
// QWidget::render exports all of it; paints only what is exposed.

#include <functional>
#include <vector>

#include <QWidget>

#include "dfi/analysis/tree_layout.h"

namespace dfi::ui {

class TreeCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit TreeCanvas(QWidget* parent = nullptr);

  // `nodeTexts[i]` is node i's printable token; `laneTargets[d]` the target's token at depth
  // d + 1, empty where it is not known.
  void setTree(analysis::TreeLayout layout, std::vector<QString> nodeTexts, std::vector<QString> laneTargets);
  void clear();
  const analysis::TreeLayout& tree() const { return layout_; }

  QRect nodeRect(int node) const;
  int nodeAt(const QPoint& point) const;  // -1 when none
  QString nodeToolTip(int node) const;
  QSize sizeHint() const override;

  // Colours of the node states, for the legend and for tests of the picture.
  static QColor rootColour();
  static QColor acceptedColour();
  static QColor nodeColour();

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  analysis::TreeLayout layout_;
  std::vector<QString> nodeTexts_;
  std::vector<QString> laneTargets_;
};

}  // namespace dfi::ui
