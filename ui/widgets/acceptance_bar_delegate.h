#pragma once
// Paints an acceptance cell as a bar: its length is the acceptance over the block size, its
// colour runs from red (nothing accepted) to green (the whole block), the number on top.
// Reads NavigatorModel::AcceptanceFractionRole (any model giving a fraction role works).

#include "widgets/one_line_delegate.h"

namespace dfi::ui {

class AcceptanceBarDelegate : public OneLineDelegate {
  Q_OBJECT
 public:
  explicit AcceptanceBarDelegate(int fractionRole, QObject* parent = nullptr);

  static QColor barColour(double fraction);

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 private:
  int fractionRole_;
};

}  // namespace dfi::ui
