#include "widgets/tree_canvas.h"

#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include "models/token_table_model.h"

namespace dfi::ui {
namespace {

constexpr int kMargin = 10;
constexpr int kHeaderHeight = 42;  // lane titles: depth and the target's token
constexpr int kLaneWidth = 150;
constexpr int kNodeWidth = 124;
constexpr int kNodeHeight = 34;
constexpr int kRowHeight = 42;

}  // namespace

TreeCanvas::TreeCanvas(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

QColor TreeCanvas::rootColour() { return TokenTableModel::stateColour(TokenTableModel::SlotState::Anchor); }
QColor TreeCanvas::acceptedColour() { return TokenTableModel::stateColour(TokenTableModel::SlotState::Accepted); }
QColor TreeCanvas::nodeColour() { return QColor(0xf7, 0xf7, 0xf7); }

void TreeCanvas::setTree(analysis::TreeLayout layout, std::vector<QString> nodeTexts, std::vector<QString> laneTargets) {
  layout_ = std::move(layout);
  nodeTexts_ = std::move(nodeTexts);
  laneTargets_ = std::move(laneTargets);
  resize(sizeHint());
  updateGeometry();
  update();
}

void TreeCanvas::clear() { setTree({}, {}, {}); }

QSize TreeCanvas::sizeHint() const {
  const int lanes = std::max(layout_.depthCount, 1);
  const int rows = std::max(layout_.rowCount, 1);
  return {2 * kMargin + lanes * kLaneWidth, 2 * kMargin + kHeaderHeight + rows * kRowHeight};
}

QRect TreeCanvas::nodeRect(int node) const {
  if (node < 0 || node >= static_cast<int>(layout_.nodes.size())) return {};
  const analysis::TreeNode& n = layout_.nodes[static_cast<std::size_t>(node)];
  const int x = kMargin + n.depth * kLaneWidth + (kLaneWidth - kNodeWidth) / 2;
  const int y = kMargin + kHeaderHeight + n.row * kRowHeight + (kRowHeight - kNodeHeight) / 2;
  return {x, y, kNodeWidth, kNodeHeight};
}

int TreeCanvas::nodeAt(const QPoint& point) const {
  for (int i = 0; i < static_cast<int>(layout_.nodes.size()); ++i)
    if (nodeRect(i).contains(point)) return i;
  return -1;
}

QString TreeCanvas::nodeToolTip(int node) const {
  if (node < 0 || node >= static_cast<int>(layout_.nodes.size())) return {};
  const analysis::TreeNode& n = layout_.nodes[static_cast<std::size_t>(node)];
  const QString& text = nodeTexts_[static_cast<std::size_t>(node)];
  if (n.parent < 0) return tr("root: the anchor '%1' (id %2)").arg(text).arg(n.token);
  QString tip = tr("'%1' (id %2) at depth %3\np = %4 in its slot").arg(text).arg(n.token).arg(n.depth).arg(n.probability, 0, 'f', 4);
  if (n.rank >= 0) tip += tr(", rank %1 of the top-k").arg(n.rank + 1);
  tip += tr("\npath probability %1").arg(n.pathProbability, 0, 'g', 4);
  const auto lane = static_cast<std::size_t>(n.depth - 1);
  if (n.accepted) {
    tip += tr("\naccepted: the target's token at this depth");
  } else if (lane < laneTargets_.size() && !laneTargets_[lane].isEmpty()) {
    tip += tr("\nthe target's token here is '%1'").arg(laneTargets_[lane]);
  }
  return tip;
}

void TreeCanvas::paintEvent(QPaintEvent* event) {
  QPainter painter(this);
  painter.fillRect(event->rect(), palette().base());
  painter.setRenderHint(QPainter::Antialiasing);
  const QFontMetrics metrics(font());

  // Depth lanes, alternating shades, with the target's token at that depth on top.
  for (int d = 0; d < layout_.depthCount; ++d) {
    const QRect lane(kMargin + d * kLaneWidth, kMargin, kLaneWidth, height() - 2 * kMargin);
    if (!lane.intersects(event->rect())) continue;
    if (d % 2) painter.fillRect(lane, palette().alternateBase());
    const QRect header(lane.left() + 4, lane.top(), lane.width() - 8, kHeaderHeight - 4);
    painter.setPen(palette().text().color());
    QString title = d == 0 ? tr("anchor") : tr("depth %1").arg(d);
    const auto target = static_cast<std::size_t>(d - 1);
    if (d > 0 && target < laneTargets_.size() && !laneTargets_[target].isEmpty())
      title += QLatin1Char('\n') + metrics.elidedText(tr("target '%1'").arg(laneTargets_[target]), Qt::ElideRight, header.width());
    painter.drawText(header, Qt::AlignHCenter | Qt::AlignTop, title);
  }

  // Edges first, so the boxes cover their ends; the accepted path drawn thicker on top.
  const QPen edge(QColor(0xb0, 0xb0, 0xb0), 1.2);
  const QPen acceptedEdge(QColor(0x2e, 0x8b, 0x3a), 3);
  for (bool accepted : {false, true}) {
    painter.setPen(accepted ? acceptedEdge : edge);
    for (int i = 1; i < static_cast<int>(layout_.nodes.size()); ++i) {
      const analysis::TreeNode& n = layout_.nodes[static_cast<std::size_t>(i)];
      if (n.accepted != accepted) continue;
      const QRect from = nodeRect(n.parent), to = nodeRect(i);
      if (!from.united(to).intersects(event->rect())) continue;
      const QPointF a(from.right(), from.center().y()), b(to.left(), to.center().y());
      const double bend = (b.x() - a.x()) / 2;
      QPainterPath path(a);
      path.cubicTo(a + QPointF(bend, 0), b - QPointF(bend, 0), b);
      painter.drawPath(path);
    }
  }

  const QPen border(QColor(0x9a, 0x9a, 0x9a), 1);
  const QPen acceptedBorder(QColor(0x2e, 0x8b, 0x3a), 2);
  for (int i = 0; i < static_cast<int>(layout_.nodes.size()); ++i) {
    const QRect r = nodeRect(i);
    if (!r.intersects(event->rect())) continue;
    const analysis::TreeNode& n = layout_.nodes[static_cast<std::size_t>(i)];
    painter.setPen(n.accepted && i > 0 ? acceptedBorder : border);
    painter.setBrush(i == 0 ? rootColour() : n.accepted ? acceptedColour() : nodeColour());
    painter.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
    // The probability as a bar along the bottom edge: a likely node reads at a glance.
    if (i > 0)
      painter.fillRect(QRectF(r.left() + 3, r.bottom() - 3, (r.width() - 6) * n.probability, 2), QColor(0x44, 0x77, 0xaa));
    const QRect text = r.adjusted(4, 2, -4, -4);
    painter.setPen(palette().text().color());
    const QString token = metrics.elidedText(nodeTexts_[static_cast<std::size_t>(i)], Qt::ElideRight, text.width());
    const QString figure = i == 0 ? tr("root") : QStringLiteral("p %1").arg(n.probability, 0, 'f', 3);
    painter.drawText(text, Qt::AlignHCenter | Qt::AlignTop, token);
    painter.setPen(palette().placeholderText().color());
    painter.drawText(text, Qt::AlignHCenter | Qt::AlignBottom, figure);
  }
}

bool TreeCanvas::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int node = nodeAt(help->pos());
    if (node >= 0) {
      QToolTip::showText(help->globalPos(), nodeToolTip(node), this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace dfi::ui
