#pragma once
// An axis of whole numbers (draft slots, positions) ticks on integers only: QCustomPlot's
// default ticker would mark halves once the range is short.

#include <QSharedPointer>

class QCPAxisTicker;

namespace dfi::ui {

// A new ticker each call (an axis shares the one it is given with every other axis given it).
QSharedPointer<QCPAxisTicker> integerTicker();

}  // namespace dfi::ui
