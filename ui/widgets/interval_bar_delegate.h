#pragma once
// Paints a difference with its interval as a horizontal bar on an axis every row shares: the
// bar from zero to the estimate, whiskers over the interval, a vertical line at zero on every
// row (so the rows read as one chart). Green when the interval lies above zero, red when below,
// grey when it contains zero or when too few prompts stand behind it for a verdict. Reads the estimate and interval from three roles of the cell and
// the axis from two roles of the column's header; a cell without an estimate gets the zero
// line only.

#include <QStyledItemDelegate>

namespace dfi::ui {

class IntervalBarDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  struct Roles {
    int estimate, low, high;  // of the cell
    int axisLow, axisHigh;    // of the horizontal header
    // Of the cell, if given: false when the interval rests on too few prompts to say anything;
    // the bar is grey then, whatever side of zero the interval lies on.
    int verdict = -1;
  };
  IntervalBarDelegate(Roles roles, QObject* parent = nullptr);

  static QColor above();  // interval above zero
  static QColor below();  // interval below zero
  static QColor across();  // interval containing zero

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 private:
  Roles roles_;
};

}  // namespace dfi::ui
