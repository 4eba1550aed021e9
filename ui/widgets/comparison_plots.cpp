#include "widgets/comparison_plots.h"

#include <algorithm>

#include <QHBoxLayout>
#include <qcustomplot.h>

#include "models/tau_table_model.h"
#include "widgets/fitted_plot.h"

namespace dfi::ui {

QCustomPlot* makeLegendPlot(const QString& title, const QString& x, const QString& y) {
  auto* plot = new FittedPlot;
  plot->setMinimumSize(200, 130);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(plot->font().family(), 9, QFont::Bold)));
  plot->xAxis->setLabel(x);
  plot->yAxis->setLabel(y);
  plot->legend->setFont(plot->font());  // no smaller than the rest: 7 pt was unreadable
  plot->legend->setBrush(Qt::NoBrush);
  plot->legend->setBorderPen(Qt::NoPen);
  // The legend goes below the axes, two entries a row: inside them it covered bars and curves.
  plot->axisRect()->insetLayout()->take(plot->legend);
  plot->plotLayout()->addElement(2, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(2, 0.001);
  plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot->legend->setWrap(2);
  plot->legend->setMargins(QMargins(4, 0, 4, 2));
  return plot;
}

namespace {

QString number(double value) { return QString::number(value, 'g', 6); }

}  // namespace

ComparisonPlots::ComparisonPlots(QWidget* parent)
    : QWidget(parent),
      histogram_(makeLegendPlot(tr("Acceptance length"), tr("acceptance length (accepted drafts + 1)"), tr("fraction of steps"))),
      slotCurves_(makeLegendPlot(tr("Per-slot acceptance"), tr("draft slot"), tr("fraction of steps accepting it"))),
      scatter_(makeLegendPlot(tr("Per-prompt \u03c4"), QString(), QString())) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  for (QCustomPlot* plot : {histogram_, slotCurves_, scatter_}) layout->addWidget(plot, 1);
  // Lengths and slots are whole numbers: ticks on integers only (multiples when crowded).
  for (QCustomPlot* plot : {histogram_, slotCurves_}) {
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    plot->xAxis->setTicker(ticker);
  }
}

QColor ComparisonPlots::worseColour() { return QColor(0xd7, 0x30, 0x1f); }

void ComparisonPlots::clear() { draw({}, {}, {}, -1, -1, {}); }

void ComparisonPlots::draw(const std::vector<analysis::ComparedSeries>& series, const std::vector<analysis::SeriesStatistics>& stats,
                           const std::vector<int>& shown, int a, int b, const analysis::PairComparison& pair) {
  drawHistogram(series, stats, shown);
  drawSlotCurves(series, stats, shown);
  const auto valid = [&](int i) { return i >= 0 && i < static_cast<int>(series.size()); };
  drawScatter(valid(a) ? &series[static_cast<std::size_t>(a)] : nullptr,
              valid(b) ? &series[static_cast<std::size_t>(b)] : nullptr, pair);
}

void ComparisonPlots::drawHistogram(const std::vector<analysis::ComparedSeries>& series,
                                    const std::vector<analysis::SeriesStatistics>& stats, const std::vector<int>& shown) {
  histogram_->clearPlottables();
  histogramData_ = {{tr("run"), tr("acceptance_length"), tr("steps"), tr("fraction")}, {}};
  auto* group = new QCPBarsGroup(histogram_);
  group->setSpacing(0);
  int longest = 1;
  const double width = 0.85 / std::max<std::size_t>(shown.size(), 1);
  for (int i : shown) {
    const analysis::SeriesStatistics& s = stats[static_cast<std::size_t>(i)];
    const QString label = QString::fromStdString(series[static_cast<std::size_t>(i)].label);
    auto* bars = new QCPBars(histogram_->xAxis, histogram_->yAxis);
    bars->setName(label);
    bars->setWidth(width);
    bars->setBarsGroup(group);
    bars->setPen(Qt::NoPen);
    bars->setBrush(TauTableModel::seriesColour(i));
    for (std::size_t length = 1; length < s.histogram.size(); ++length) {
      const double fraction = s.steps ? static_cast<double>(s.histogram[length]) / static_cast<double>(s.steps) : 0.0;
      bars->addData(static_cast<double>(length), fraction);
      histogramData_.rows.push_back({label, QString::number(length), QString::number(s.histogram[length]), number(fraction)});
    }
    longest = std::max(longest, static_cast<int>(s.histogram.size()) - 1);
  }
  histogram_->xAxis->setRange(0, longest + 1);
  histogram_->yAxis->rescale();
  histogram_->yAxis->setRangeLower(0);
  histogram_->legend->setVisible(!shown.empty());
  histogram_->replot(QCustomPlot::rpQueuedReplot);
}

void ComparisonPlots::drawSlotCurves(const std::vector<analysis::ComparedSeries>& series,
                                     const std::vector<analysis::SeriesStatistics>& stats, const std::vector<int>& shown) {
  slotCurves_->clearGraphs();
  slotCurveData_ = {{tr("run"), tr("slot"), tr("acceptance_rate")}, {}};
  int slotCount = 1;
  for (int i : shown) {
    const analysis::SeriesStatistics& s = stats[static_cast<std::size_t>(i)];
    const QString label = QString::fromStdString(series[static_cast<std::size_t>(i)].label);
    QCPGraph* graph = slotCurves_->addGraph();
    graph->setName(label);
    graph->setPen(QPen(TauTableModel::seriesColour(i), 2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    for (std::size_t slot = 0; slot < s.slotRates.size(); ++slot) {
      graph->addData(static_cast<double>(slot + 1), s.slotRates[slot]);
      slotCurveData_.rows.push_back({label, QString::number(slot + 1), number(s.slotRates[slot])});
    }
    slotCount = std::max(slotCount, static_cast<int>(s.slotRates.size()));
  }
  slotCurves_->xAxis->setRange(0, slotCount + 1);
  slotCurves_->yAxis->setRange(0, 1.02);
  slotCurves_->legend->setVisible(!shown.empty());
  slotCurves_->replot(QCustomPlot::rpQueuedReplot);
}

void ComparisonPlots::drawScatter(const analysis::ComparedSeries* a, const analysis::ComparedSeries* b, const analysis::PairComparison& pair) {
  scatter_->clearGraphs();
  scatter_->clearItems();
  scatterData_ = {{tr("prompt"), tr("tau_a"), tr("tau_b")}, {}};
  auto* title = static_cast<QCPTextElement*>(scatter_->plotLayout()->element(0, 0));
  if (!a || !b) {
    title->setText(tr("Per-prompt \u03c4: choose runs A and B"));
    scatter_->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  QCPGraph* better = scatter_->addGraph();
  QCPGraph* worse = scatter_->addGraph();
  better->setName(tr("B \u2265 A"));
  worse->setName(tr("B < A"));
  for (QCPGraph* g : {better, worse}) {
    g->setLineStyle(QCPGraph::lsNone);
    const QColor colour = g == worse ? worseColour() : QColor(0x4e, 0x79, 0xa7);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 4));
  }
  double top = 1;
  for (std::size_t i = 0; i < pair.prompts.size(); ++i) {
    (pair.tauB[i] < pair.tauA[i] ? worse : better)->addData(pair.tauA[i], pair.tauB[i]);
    top = std::max({top, pair.tauA[i], pair.tauB[i]});
    scatterData_.rows.push_back({QString::number(pair.prompts[i]), number(pair.tauA[i]), number(pair.tauB[i])});
  }
  auto* diagonal = new QCPItemStraightLine(scatter_);
  diagonal->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  diagonal->point1->setCoords(0, 0);
  diagonal->point2->setCoords(1, 1);
  scatter_->xAxis->setRange(0, top * 1.05);
  scatter_->yAxis->setRange(0, top * 1.05);
  scatter_->xAxis->setLabel(tr("A: %1").arg(QString::fromStdString(a->label)));
  scatter_->yAxis->setLabel(tr("B: %1").arg(QString::fromStdString(b->label)));
  const analysis::Interval& d = pair.difference;
  // One line that FittedPlot wraps where the plot is narrow (a fixed break left three lines).
  title->setText(tr("Per-prompt \u03c4 (%1 prompts): B \u2212 A = %2 [%3, %4], 95% paired")
                     .arg(pair.prompts.size())
                     .arg(d.estimate, 0, 'f', 2)
                     .arg(d.low, 0, 'f', 2)
                     .arg(d.high, 0, 'f', 2));
  scatter_->legend->setVisible(true);
  scatter_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace dfi::ui
