#include "widgets/integer_ticker.h"

#include <qcustomplot.h>

namespace dfi::ui {

QSharedPointer<QCPAxisTicker> integerTicker() {
  auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
  ticker->setTickStep(1.0);
  // Integer multiples of the step on a long range, so the ticks do not crowd the axis.
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  return ticker;
}

}  // namespace dfi::ui
