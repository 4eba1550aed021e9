#include "widgets/interval_bar_delegate.h"

#include <algorithm>

#include <QApplication>
#include <QPainter>

namespace dfi::ui {

IntervalBarDelegate::IntervalBarDelegate(Roles roles, QObject* parent) : QStyledItemDelegate(parent), roles_(roles) {}

QColor IntervalBarDelegate::above() { return QColor(46, 160, 67); }
QColor IntervalBarDelegate::below() { return QColor(207, 34, 46); }
QColor IntervalBarDelegate::across() { return QColor(130, 140, 155); }

QSize IntervalBarDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
  return QStyledItemDelegate::sizeHint(option, index).expandedTo(QSize(12 * option.fontMetrics.averageCharWidth(), 0));
}

void IntervalBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  opt.text.clear();
  const QWidget* widget = opt.widget;
  (widget ? widget->style() : QApplication::style())->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

  const QAbstractItemModel* model = index.model();
  const double axisLow = model->headerData(index.column(), Qt::Horizontal, roles_.axisLow).toDouble();
  const double axisHigh = model->headerData(index.column(), Qt::Horizontal, roles_.axisHigh).toDouble();
  if (!(axisHigh > axisLow)) return;
  const QRectF area = QRectF(option.rect).adjusted(6, 0, -6, 0);
  const auto x = [&](double value) {
    return area.left() + area.width() * (std::clamp(value, axisLow, axisHigh) - axisLow) / (axisHigh - axisLow);
  };
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing, false);
  // Zero over the whole row height, so the rows join into one line.
  painter->setPen(QPen(option.palette.text().color(), 1));
  painter->drawLine(QPointF(x(0), option.rect.top()), QPointF(x(0), option.rect.bottom() + 1));

  const QVariant estimate = index.data(roles_.estimate);
  if (estimate.isValid()) {
    const double value = estimate.toDouble();
    const double low = index.data(roles_.low).toDouble(), high = index.data(roles_.high).toDouble();
    const bool verdict = roles_.verdict < 0 || index.data(roles_.verdict).toBool();
    const QColor colour = !verdict ? across() : low > 0 ? above() : high < 0 ? below() : across();
    const double mid = area.center().y();
    const double barHeight = std::max(4.0, area.height() * 0.45);
    const QRectF bar(QPointF(std::min(x(0), x(value)), mid - barHeight / 2),
                     QPointF(std::max(x(0), x(value)), mid + barHeight / 2));
    painter->fillRect(bar.width() < 2 ? bar.adjusted(-1, 0, 1, 0) : bar, colour);
    // The interval: a line with end caps, in the text colour so it shows on the bar too.
    painter->setPen(QPen(option.palette.text().color(), 1.5));
    painter->setRenderHint(QPainter::Antialiasing, true);
    const double cap = barHeight * 0.8;
    painter->drawLine(QPointF(x(low), mid), QPointF(x(high), mid));
    painter->drawLine(QPointF(x(low), mid - cap / 2), QPointF(x(low), mid + cap / 2));
    painter->drawLine(QPointF(x(high), mid - cap / 2), QPointF(x(high), mid + cap / 2));
  }
  painter->restore();
}

}  // namespace dfi::ui
