#include "widgets/acceptance_bar_delegate.h"

#include <algorithm>

#include <QApplication>
#include <QPainter>

namespace dfi::ui {

AcceptanceBarDelegate::AcceptanceBarDelegate(int fractionRole, QObject* parent)
    : OneLineDelegate(parent), fractionRole_(fractionRole) {}

QColor AcceptanceBarDelegate::barColour(double fraction) {
  // Hue 0 (red) .. 120 (green); light enough for black text on top.
  return QColor::fromHsv(static_cast<int>(120 * std::clamp(fraction, 0.0, 1.0)), 110, 235);
}

void AcceptanceBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  const QVariant value = index.data(fractionRole_);
  if (!value.isValid() || index.data(Qt::DisplayRole).toString().isEmpty()) {
    OneLineDelegate::paint(painter, option, index);
    return;
  }
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  QStyleOptionViewItem background = opt;
  background.text.clear();
  QApplication::style()->drawControl(QStyle::CE_ItemViewItem, &background, painter, opt.widget);  // selection background
  const double fraction = std::clamp(value.toDouble(), 0.0, 1.0);
  const QRect bar = option.rect.adjusted(2, 3, -2, -3);
  painter->save();
  painter->fillRect(QRect(bar.topLeft(), QSize(static_cast<int>(bar.width() * fraction), bar.height())), barColour(fraction));
  // The number sits on the light bar, so it keeps the normal text colour even when selected.
  painter->setPen(option.palette.text().color());
  drawText(painter, opt, bar.adjusted(4, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft);
  painter->restore();
}

}  // namespace dfi::ui
