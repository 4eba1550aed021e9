#include "panels/stats_overview.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <qcustomplot.h>

namespace dfi::ui {
namespace {

// One number per tensor: the mean of a per-position statistic, or its maximum.
double summaryOf(const StatisticSeries& s, const char* stat, bool max) {
  const auto* v = s.stat(stat);
  if (!v || v->empty()) return std::numeric_limits<double>::quiet_NaN();
  double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
  for (float x : *v)
    acc = max ? std::max(acc, static_cast<double>(x)) : acc + static_cast<double>(x);
  return max ? acc : acc / static_cast<double>(v->size());
}

struct OverviewCurve {
  const char* stat;
  bool max;
  const char* label;
  QColor colour;
};
const OverviewCurve kOverview[] = {{"std", false, "std (mean)", QColor(255, 127, 14)},
                                   {"rms", false, "rms (mean)", QColor(44, 160, 44)},
                                   {"absmax", true, "abs-max (max)", QColor(214, 39, 40)}};

}  // namespace

StatsOverview::StatsOverview(const std::vector<StatisticSeries>& tensors,
                             std::vector<std::optional<StatisticSeries>> others)
    : tensors_(tensors), others_(std::move(others)) {}

bool StatsOverview::compared() const {
  return std::ranges::any_of(others_, [](const auto& o) { return o.has_value(); });
}

QString StatsOverview::draw(QCustomPlot& curves, QCustomPlot& difference) const {
  const bool compared = this->compared();
  auto labels = QSharedPointer<QCPAxisTickerText>::create();
  QVector<double> x;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    labels->addTick(static_cast<double>(i),
                    tensors_[i].label().replace(QStringLiteral(" ("), QStringLiteral("\n(")));
    x << static_cast<double>(i);
  }
  for (QCustomPlot* plot : {&curves, &difference}) {
    plot->xAxis->setTicker(labels);
    plot->xAxis->setLabel(tr("tensor"));
  }
  curves.yAxis->setLabel(tr("over positions: mean of std, rms; max of abs-max"));
  for (const OverviewCurve& c : kOverview) {
    QVector<double> ya, yb, diff;
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      ya << summaryOf(tensors_[i], c.stat, c.max);
      const double vb = others_[i] ? summaryOf(*others_[i], c.stat, c.max)
                                   : std::numeric_limits<double>::quiet_NaN();
      yb << vb;
      diff << ya.back() - vb;
    }
    QCPGraph* g = curves.addGraph();
    g->setName(compared ? QStringLiteral("%1 (A)").arg(c.label) : QString::fromLatin1(c.label));
    g->setPen(QPen(c.colour, 1.6));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    g->setData(x, ya, true);
    if (compared) {
      QCPGraph* gb = curves.addGraph();
      gb->setName(QStringLiteral("%1 (B)").arg(c.label));
      gb->setPen(QPen(c.colour, 1.4, Qt::DashLine));
      gb->setData(x, yb, true);
      QCPGraph* d = difference.addGraph();
      d->setName(QString::fromLatin1(c.label).section(' ', 0, 0));
      d->setPen(QPen(c.colour, 1.4));
      d->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
      d->setData(x, diff, true);
    }
  }
  QStringList bad;
  QVector<double> badX;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const StatisticSeries& a = tensors_[i];
    if (summaryOf(a, "nan", true) > 0 || summaryOf(a, "inf", true) > 0) {
      bad << a.label();
      badX << static_cast<double>(i);
    }
  }
  curves.rescaleAxes();
  if (!badX.isEmpty()) {
    QCPGraph* g = curves.addGraph();
    g->setName(tr("NaN / Inf"));
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, QColor(200, 0, 0),
                                       QColor(255, 60, 60), 10));
    g->setData(badX, QVector<double>(badX.size(), curves.yAxis->range().upper * 1.04), true);
  }
  const QCPRange r = curves.yAxis->range();
  curves.xAxis->setRange(-0.5, static_cast<double>(tensors_.size()) - 0.5);
  curves.yAxis->setRange(r.lower - 0.05 * r.size(),
                         r.upper + 0.1 * std::max(r.size(), std::abs(r.upper)));
  if (compared) {
    difference.rescaleAxes();
    difference.xAxis->setRange(-0.5, static_cast<double>(tensors_.size()) - 0.5);
    difference.yAxis->scaleRange(1.1);
  }
  return bad.isEmpty() ? QString() : tr("NaN or Inf in: %1").arg(bad.join(QStringLiteral(", ")));
}

CsvTable StatsOverview::table() const {
  CsvTable table;
  table.header << tr("tensor") << tr("layer");
  for (const OverviewCurve& c : kOverview) table.header << QString::fromLatin1(c.label);
  for (const OverviewCurve& c : kOverview)
    table.header << QStringLiteral("B %1").arg(QString::fromLatin1(c.label));
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const StatisticSeries& a = tensors_[i];
    QStringList row{QString::fromStdString(a.tensor), QString::number(a.layer)};
    for (const OverviewCurve& c : kOverview)
      row << QString::number(summaryOf(a, c.stat, c.max), 'g', 7);
    for (const OverviewCurve& c : kOverview)
      row << (others_[i] ? QString::number(summaryOf(*others_[i], c.stat, c.max), 'g', 7)
                         : QString());
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace dfi::ui
