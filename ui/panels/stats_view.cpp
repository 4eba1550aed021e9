#include "panels/stats_view.h"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "engine/inspect_answer.h"
#include "session/session_context.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/analysis/block_parity.h"
#include "dfi/base/error.h"
#include "dfi/session/hidden_statistics.h"
#include "models/dump_statistics.h"
#include "dfi/session/record_fields.h"
#include "widgets/empty_hint.h"
#include "widgets/fitted_plot.h"
#include "widgets/integer_ticker.h"

namespace dfi::ui {
namespace {

namespace hs = session::hidden_statistics;

struct Curve {
  const char* stat;
  const char* label;
  QColor colour;
  double width;
};
// rms is drawn first and wide, std over it and thin: with a mean near 0 the two are the same
// curve, and either one drawn last would hide the other.
const Curve kCurves[] = {{"mean", "mean", QColor(31, 119, 180), 1.6},
                         {"rms", "rms", QColor(44, 160, 44), 5.0},
                         {"std", "std", QColor(255, 127, 14), 1.6},
                         {"absmax", "abs-max", QColor(214, 39, 40), 1.6}};

QCustomPlot* newPlot(const QString& x, const QString& y) {
  auto* plot = new FittedPlot;
  plot->xAxis->setLabel(x);
  plot->yAxis->setLabel(y);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->setMinimumSize(260, 160);
  return plot;
}

QVector<double> toVector(const std::vector<float>& v) {
  QVector<double> out;
  out.reserve(static_cast<qsizetype>(v.size()));
  for (float f : v) out << static_cast<double>(f);
  return out;
}

constexpr int kLegendWidth = 190;
constexpr int kLeftMargin = 78;

bool isBlockTensor(const StatisticSeries& s) { return s.tensor == hs::kDrafterLayer; }

}  // namespace

StatsView::StatsView(SessionContext* context, QWidget* parent)
    : BlockProbePanel(context, tr("Select a block to see its hidden-state statistics."),
                      tr("Re-draft this block in dflash-eval serve with every probe on and store its statistics"),
                      parent),
      tensorBox_(new QComboBox),
      compareBox_(new QComboBox),
      import_(new QPushButton(tr("Import dump…"))),
      curves_(newPlot(tr("position"), tr("value"))),
      histogram_(newPlot(tr("value"), tr("count"))),
      difference_(newPlot(tr("position"), tr("A - B"))) {
  tensorBox_->setMinimumContentsLength(22);
  compareBox_->setMinimumContentsLength(26);
  compareBox_->setToolTip(tr("Overlay another run's block at the same prompt and anchor, or an imported dump"));
  import_->setToolTip(tr("Overlay an external dump of the same hidden states (safetensors; transformers' "
                         "hidden_states.<k> pairs with the target tap of layer k-1, as in dflash-eval diff-dump)"));
  // Legends in a column of their own, right of the plot, never over the curves; the curves and
  // the difference get the same left margin and legend width, so their positions line up.
  for (QCustomPlot* plot : {curves_, difference_, histogram_}) {
    plot->legend->setFont(font());
    plot->axisRect()->insetLayout()->take(plot->legend);
    auto* column = new QCPLayoutGrid;
    plot->plotLayout()->addElement(0, 1, column);
    plot->plotLayout()->setColumnStretchFactor(1, 0.001);
    column->addElement(0, 0, plot->legend);
    column->addElement(1, 0, new QCPLayoutElement(plot));  // takes the rest of the height
    column->setRowStretchFactor(0, 0.001);
    plot->legend->setMinimumSize(kLegendWidth, 0);
    plot->legend->setMaximumSize(kLegendWidth, QWIDGETSIZE_MAX);
    column->setAutoMargins(QCP::msNone);
    column->setMargins(QMargins(0, 2, 8, 0));  // room for the frame's right edge
    plot->legend->setVisible(true);
    if (plot != histogram_) {
      plot->xAxis->setTicker(integerTicker());
      plot->axisRect()->setAutoMargins(QCP::msTop | QCP::msRight | QCP::msBottom);
      plot->axisRect()->setMargins(QMargins(kLeftMargin, 0, 0, 0));
    }
  }

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("tensor")));
  controls->addWidget(tensorBox_);
  controls->addWidget(new QLabel(tr("compare with")));
  controls->addWidget(compareBox_);
  controls->addWidget(import_);
  controls->addStretch(1);
  controls->addWidget(fetch_);
  // The difference shares the curves' positions, so it sits right under them (shown only
  // while something is overlaid); the histogram below.
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(headline_);
  layout->addLayout(controls);
  layout->addWidget(curves_, 3);
  layout->addWidget(difference_, 2);
  layout->addWidget(histogram_, 2);
  layout->addWidget(status_);

  connect(tensorBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (!updating_) redraw();
  });
  connect(compareBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (updating_) return;
    const qint64 data = compareBox_->currentData().toLongLong();
    if (data >= 0) compareWithStep(data);
    else redraw();
  });
  connect(import_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Import a dump"), QString(),
                                                      tr("safetensors (*.safetensors);;All files (*)"));
    if (path.isEmpty()) return;
    try {
      importDump(path);
    } catch (const Error& e) {
      status_->setText(tr("Cannot import %1: %2").arg(path, QString::fromStdString(e.what())));
    }
  });
  for (QCustomPlot* plot : {curves_, histogram_, difference_})
    addExportMenu(plot, QStringLiteral("statistics"), [this] { return exportData(); });
  attach();
  if (!step_) redraw();  // says what to select
}

StatsView::~StatsView() = default;  // ImportedDump is complete here

void StatsView::loadSelection() {
  readSelectedStep();
  earlierRows_ = step_ ? prependEarlierContextRows(*context_, *step_, probes_) : 0;
  compareStep_ = 0;
  compareProbes_ = {};
  load();
}

void StatsView::load() {
  const QString previous = tensorBox_->currentText();
  updating_ = true;
  tensorBox_->clear();
  for (const StatisticSeries& s : probes_.statistics) tensorBox_->addItem(s.label());
  if (probes_.statistics.size() > 1) tensorBox_->addItem(tr("overview: every tensor"));
  const int keep = tensorBox_->findText(previous);
  tensorBox_->setCurrentIndex(keep >= 0 ? keep : 0);
  updating_ = false;
  fillCompareBox();
  if (step_) {
    headline_->setText(tr("%1, \"%2\", step %3: block at anchor position %4 (%5 tensors with statistics)")
                           .arg(context_->runName(step_->runId))
                           .arg(context_->promptName(step_->runId, step_->promptId))
                           .arg(step_->stepIndex)
                           .arg(step_->anchorPosition)
                           .arg(probes_.statistics.size()));
  }
  fetch_->setEnabled(canFetch());
  redraw();
}

void StatsView::fillCompareBox() {
  updating_ = true;
  compareBox_->clear();
  compareBox_->addItem(tr("nothing"), qint64{0});
  // Another block is overlaid on this one's statistics: without them there is nothing to look up.
  if (step_ && context_ && !probes_.statistics.empty()) {
    for (const session::RunRecord& run : context_->runs()) {
      if (run.runId == step_->runId) continue;
      for (const session::StepRecord& s : context_->steps(run.runId, step_->promptId))
        if (s.anchorPosition == step_->anchorPosition && s.mode == step_->mode &&
            !groupStatistics(context_->statistics(run.runId, s.stepId)).statistics.empty())
          compareBox_->addItem(tr("%1 (run %2), step %3").arg(QString::fromStdString(run.name)).arg(run.runId).arg(s.stepIndex),
                               qint64{s.stepId});
    }
  }
  if (dump_) compareBox_->addItem(tr("dump %1").arg(dump_->fileName()), qint64{-1});
  compareBox_->setEnabled(compareBox_->count() > 1);
  int index = compareBox_->findData(qint64{compareStep_});
  if (compareStep_ == 0 && dump_) index = compareBox_->findData(qint64{-1});
  compareBox_->setCurrentIndex(std::max(0, index));
  updating_ = false;
}

void StatsView::compareWithStep(session::StepId step) {
  compareStep_ = step;
  compareProbes_ = {};
  if (step != 0 && context_)
    if (const auto record = context_->step(step)) {
      compareProbes_ = loadBlockProbes(*context_, record->runId, step);
      prependEarlierContextRows(*context_, *record, compareProbes_);
    }
  updating_ = true;
  compareBox_->setCurrentIndex(std::max(0, compareBox_->findData(qint64{step})));
  updating_ = false;
  redraw();
}

void StatsView::importDump(const QString& path) {
  dump_ = std::make_unique<ImportedDump>(path.toStdString());
  compareStep_ = 0;
  compareProbes_ = {};
  fillCompareBox();
  redraw();
}

void StatsView::chooseSeries(int index) { tensorBox_->setCurrentIndex(index); }

const StatisticSeries* StatsView::current() const {
  const int i = tensorBox_->currentIndex();
  if (i < 0 || i >= static_cast<int>(probes_.statistics.size())) return nullptr;
  return &probes_.statistics[static_cast<std::size_t>(i)];
}

std::int64_t StatsView::firstPosition(const StatisticSeries& s) const {
  if (isBlockTensor(s) || !step_) return 0;
  // Inspect answers hold the block's whole context, [0, context) (context = anchor + 1 with the
  // anchor-visible variant); teacher-forced records the rows since the previous anchor,
  // [previous anchor, anchor).
  const auto variant = parseEnum<session::MaskVariant>(step_->maskVariant);
  const std::int64_t context = analysis::inferenceContextLength(variant.value_or(analysis::MaskVariant::Reference),
                                                                step_->anchorPosition);
  const auto n = static_cast<std::int64_t>(s.positions());
  if (n >= context) return 0;
  return std::max<std::int64_t>(0, step_->anchorPosition - n);
}

std::optional<StatisticSeries> StatsView::counterpart(const StatisticSeries& a, QString* why) const {
  if (compareBox_->currentData().toLongLong() < 0 && dump_) {
    if (isBlockTensor(a)) {
      if (why) *why = tr("the dump holds context positions; drafter layers are compared between runs");
      return std::nullopt;
    }
    return dump_->seriesFor(a, firstPosition(a) + static_cast<std::int64_t>(a.positions()), why);
  }
  if (compareStep_ == 0) return std::nullopt;
  for (const StatisticSeries& s : compareProbes_.statistics)
    if (s.tensor == a.tensor && s.layer == a.layer) return s;
  if (why) *why = tr("the other block has no statistics of %1").arg(a.label());
  return std::nullopt;
}

void StatsView::redraw() {
  const bool empty = !isOverview() && !current();
  for (QCustomPlot* plot : {curves_, histogram_, difference_}) {
    plot->clearGraphs();
    plot->clearPlottables();
    plot->clearItems();
    plot->legend->setVisible(!empty);  // an empty legend is a stray box
  }
  setEmptyHint(curves_, {});
  if (isOverview()) return drawOverview();
  curves_->xAxis->setTicker(integerTicker());
  difference_->xAxis->setTicker(integerTicker());
  curves_->yAxis->setLabel(tr("value"));
  const StatisticSeries* a = current();
  QString why;
  const std::optional<StatisticSeries> b = a ? counterpart(*a, &why) : std::nullopt;
  const auto* counts = a ? a->stat(std::string(hs::kHistogram)) : nullptr;
  const auto* range = a ? a->stat(std::string(hs::kHistogramRange)) : nullptr;
  const bool hasHistogram = counts && range && range->size() == 2 && !counts->empty();
  // Each plot's visibility set once, then one layout: every change of it resizes (and so
  // redraws) the plots beside it.
  histogram_->setVisible(hasHistogram);  // empty axes and a stray legend box say nothing
  difference_->setVisible(b.has_value());
  if (this->layout()) this->layout()->activate();
  QStringList notes;
  if (!a) {
    if (step_ && step_->mode != session::EvaluationMode::TeacherForced)
      notes << tr("The session holds no hidden-state statistics for this block: `run --hidden-stats` records them "
                  "for teacher-forced blocks (select the teacher-forced run's block at this anchor)%1.")
                   .arg(hasEngine() ? tr(", or Fetch from engine") : QString());
    else if (step_)
      notes << tr("The session holds no hidden-state statistics for this block (record with --hidden-stats%1).")
                   .arg(hasEngine() ? tr(", or Fetch from engine") : QString());
    // Words instead of empty axes: what to select, or why this block has nothing to show.
    setEmptyHint(curves_, step_ ? notes.join(' ') : tr("Select a step in the navigator to see the hidden-state "
                                                        "statistics of its block."));
    replotShown();
    status_->setText(notes.join(' '));
    return;
  }
  const std::int64_t first = firstPosition(*a);
  // Each point is a statistic over the hidden dimension; said on the x axis, which has the room.
  const QString xLabel = isBlockTensor(*a) ? tr("block slot (0 = anchor); statistics over the hidden dimension")
                                           : tr("sequence position; statistics over the hidden dimension");
  curves_->xAxis->setLabel(xLabel);
  difference_->xAxis->setLabel(xLabel);
  // B may cover fewer positions than A (a teacher-forced pass whose earlier rows are missing):
  // each is drawn at its own positions, and A - B only where both have a row.
  const std::int64_t firstB = b ? firstPosition(*b) : first;
  auto positionsFrom = [](std::int64_t from, std::size_t n) {
    QVector<double> x;
    for (std::size_t i = 0; i < n; ++i) x << static_cast<double>(from + static_cast<std::int64_t>(i));
    return x;
  };
  auto positionsOf = [&](std::size_t n) { return positionsFrom(first, n); };
  double top = 0;
  for (const Curve& c : kCurves) {
    if (const auto* values = a->stat(c.stat)) {
      QCPGraph* g = curves_->addGraph();
      g->setName(b ? QStringLiteral("%1 (A)").arg(c.label) : QString::fromLatin1(c.label));
      g->setPen(QPen(c.colour, c.width));
      g->setScatterStyle(values->size() <= 64 ? QCPScatterStyle(QCPScatterStyle::ssCircle, c.width + 3)
                                              : QCPScatterStyle());
      g->setData(positionsOf(values->size()), toVector(*values), true);
      for (float v : *values)
        if (std::isfinite(v)) top = std::max(top, static_cast<double>(std::abs(v)));
    }
    if (b)
      if (const auto* values = b->stat(c.stat)) {
        QCPGraph* g = curves_->addGraph();
        g->setName(QStringLiteral("%1 (B)").arg(c.label));
        g->setPen(QPen(c.colour, std::min(c.width, 3.0), Qt::DashLine));
        g->setData(positionsFrom(firstB, values->size()), toVector(*values), true);
        if (const auto* mine = a->stat(c.stat)) {
          QCPGraph* d = difference_->addGraph();
          d->setName(QString::fromLatin1(c.label));
          d->setPen(QPen(c.colour, 1.4));
          const std::int64_t from = std::max(first, firstB);
          const std::int64_t to = std::min(first + static_cast<std::int64_t>(mine->size()),
                                           firstB + static_cast<std::int64_t>(values->size()));
          QVector<double> x, diff;
          for (std::int64_t p = from; p < to; ++p) {
            x << static_cast<double>(p);
            diff << static_cast<double>((*mine)[static_cast<std::size_t>(p - first)]) -
                        static_cast<double>((*values)[static_cast<std::size_t>(p - firstB)]);
          }
          d->setData(x, diff, true);
        }
      }
  }
  if (earlierRows_ > 0 && !isBlockTensor(*a)) {
    // The rows this block added, shaded; the rest are the pass's earlier anchors' rows.
    const auto own = static_cast<std::int64_t>(a->positions()) - earlierRows_;
    auto* band = new QCPItemRect(curves_);
    band->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
    band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    band->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
    band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    band->topLeft->setCoords(static_cast<double>(first + earlierRows_) - 0.5, 0);
    band->bottomRight->setCoords(static_cast<double>(first + earlierRows_ + own) - 0.5, 1);
    band->setPen(Qt::NoPen);
    band->setBrush(QColor(255, 200, 0, 60));
    band->setLayer(QStringLiteral("background"));
    notes << tr("Positions %1–%2 are the rows this block added (shaded); %3–%4 were recorded at the earlier anchors "
                "of its teacher-forced pass.")
                 .arg(first + earlierRows_)
                 .arg(first + earlierRows_ + own - 1)
                 .arg(first)
                 .arg(first + earlierRows_ - 1);
  }
  // NaN / Inf: a red marker above every position that holds any (filled: A, hollow: B).
  const auto markNonFinite = [&](const StatisticSeries& s, bool isB) {
    QVector<double> badX, badY;
    std::int64_t nan = 0, inf = 0;
    const auto* nans = s.stat("nan");
    const auto* infs = s.stat("inf");
    for (std::size_t i = 0; i < s.positions(); ++i) {
      const double n = nans && i < nans->size() ? (*nans)[i] : 0;
      const double f = infs && i < infs->size() ? (*infs)[i] : 0;
      nan += static_cast<std::int64_t>(n);
      inf += static_cast<std::int64_t>(f);
      if (n > 0 || f > 0) {
        badX << static_cast<double>((isB ? firstB : first) + static_cast<std::int64_t>(i));
        badY << (top > 0 ? top * (isB ? 1.02 : 1.08) : 1.0);
      }
    }
    if (badX.isEmpty()) return;
    QCPGraph* g = curves_->addGraph();
    g->setName(isB ? tr("NaN / Inf (B)") : (b ? tr("NaN / Inf (A)") : tr("NaN / Inf")));
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, QColor(200, 0, 0),
                                       isB ? QColor(Qt::white) : QColor(255, 60, 60), 10));
    g->setData(badX, badY, true);
    notes << tr("%1%2 NaN and %3 Inf values at %n position(s) (red markers)", nullptr, static_cast<int>(badX.size()))
                 .arg(isB ? tr("B: ") : (b ? tr("A: ") : QString()))
                 .arg(nan)
                 .arg(inf);
  };
  markNonFinite(*a, false);
  if (b) markNonFinite(*b, true);
  curves_->rescaleAxes();
  {
    const QCPRange r = curves_->yAxis->range();
    const double pad = std::max(r.size(), 1e-6) * 0.05;
    curves_->yAxis->setRange(r.lower - pad, std::max(r.upper + pad, top > 0 ? top * 1.15 : r.upper + pad));
  }
  curves_->xAxis->setRange(curves_->xAxis->range().lower - 0.5, curves_->xAxis->range().upper + 0.5);
  curves_->legend->setVisible(true);
  if (b) {
    difference_->rescaleAxes();
    difference_->xAxis->setRange(difference_->xAxis->range().lower - 0.5, difference_->xAxis->range().upper + 0.5);
    difference_->yAxis->scaleRange(1.1);
    difference_->yAxis->setLabel(tr("A - B"));
  } else if (!why.isEmpty()) {
    notes << why;
  }

  // Histogram: 64 bins of the finite values over [lo, hi].
  if (hasHistogram) {
    const double lo = (*range)[0], hi = (*range)[1];
    const double width = (hi - lo) / static_cast<double>(counts->size());
    QVector<double> centres;
    for (std::size_t i = 0; i < counts->size(); ++i) centres << lo + (static_cast<double>(i) + 0.5) * width;
    auto* bars = new QCPBars(histogram_->xAxis, histogram_->yAxis);
    // A teacher-forced block's histogram is of the rows it added, not the earlier ones shown.
    const QString own = earlierRows_ > 0 ? tr("this block's own rows") : tr("this block");
    bars->setName(b ? tr("A (%1)").arg(own) : own);
    bars->setWidth(width > 0 ? width : 1);
    bars->setPen(QPen(QColor(31, 119, 180)));
    bars->setBrush(QColor(31, 119, 180, 150));
    bars->setData(centres, toVector(*counts), true);
    const auto* countsB = b ? b->stat(std::string(hs::kHistogram)) : nullptr;
    const auto* rangeB = b ? b->stat(std::string(hs::kHistogramRange)) : nullptr;
    if (countsB && rangeB && rangeB->size() == 2 && !countsB->empty()) {
      const double wB = ((*rangeB)[1] - (*rangeB)[0]) / static_cast<double>(countsB->size());
      QVector<double> cB;
      for (std::size_t i = 0; i < countsB->size(); ++i) cB << (*rangeB)[0] + (static_cast<double>(i) + 0.5) * wB;
      // B on its own count axis (right): a dump's few positions or another block's size
      // would otherwise flatten one of the two.
      QCPGraph* g = histogram_->addGraph(histogram_->xAxis, histogram_->yAxis2);
      g->setName(tr("B (compared, right axis)"));
      g->setLineStyle(QCPGraph::lsStepCenter);
      g->setPen(QPen(QColor(214, 39, 40), 1.4, Qt::DashLine));
      g->setData(cB, toVector(*countsB), true);
    }
    histogram_->yAxis2->setVisible(histogram_->graphCount() > 0);
    histogram_->yAxis2->setLabel(tr("count (B)"));
    histogram_->rescaleAxes();
    for (QCPAxis* axis : {histogram_->yAxis, histogram_->yAxis2}) {
      axis->setRangeLower(0);
      axis->scaleRange(1.05, axis->range().lower);
    }
    histogram_->xAxis->setLabel(tr("value (%1, 64 bins of the finite values over [%2, %3])")
                                    .arg(a->label())
                                    .arg(lo, 0, 'g', 4)
                                    .arg(hi, 0, 'g', 4));
  } else {
    notes << tr("No histogram was recorded for %1.").arg(a->label());
  }
  // The teacher-forced step's train/eval parity, when recorded, in the words the CLI's verdict uses.
  if (const auto parity = analysis::recordedParity(probes_.other))
    notes << QString::fromStdString(analysis::parityInWords(*parity, static_cast<int>(step_->draftTokens.size())));
  replotShown();
  status_->setText(notes.join(QStringLiteral(" · ")));
}

// A hidden plot is left as it is: every redraw that shows it again replots it.
void StatsView::replotShown() {
  for (QCustomPlot* plot : {curves_, histogram_, difference_})
    if (!plot->isHidden()) plot->replot(QCustomPlot::rpQueuedReplot);
}

bool StatsView::isOverview() const {
  return probes_.statistics.size() > 1 && tensorBox_->currentIndex() == static_cast<int>(probes_.statistics.size());
}

StatsOverview StatsView::overview() const {
  std::vector<std::optional<StatisticSeries>> others;
  for (const StatisticSeries& a : probes_.statistics) others.push_back(counterpart(a, nullptr));
  return StatsOverview(probes_.statistics, std::move(others));
}

void StatsView::drawOverview() {
  const StatsOverview drawn = overview();
  difference_->setVisible(drawn.compared());
  histogram_->setVisible(false);  // one tensor's histogram; none for all of them
  if (this->layout()) this->layout()->activate();
  status_->setText(drawn.draw(*curves_, *difference_));
  replotShown();
}

void StatsView::showAnswer(const InspectAnswer& answer) {
  if (!step_) return;
  if (answer.step == step_->stepId) {
    // An answer holds the block's whole context; a stored one joins the step's own records.
    probes_ = answer.stored ? loadBlockProbes(*context_, step_->runId, step_->stepId) : groupStatistics(answer.statistics);
    earlierRows_ = answer.stored ? prependEarlierContextRows(*context_, *step_, probes_) : 0;
  } else if (answer.step == compareStep_ && answer.stored) {
    compareWithStep(compareStep_);
    return;
  } else {
    fetch_->setEnabled(true);  // another block's answer: this one may ask now
    return;
  }
  load();
}

CsvTable StatsView::exportData() {
  if (isOverview()) return overview().table();
  const StatisticSeries* a = current();
  if (!a) return {};
  QString why;
  const std::optional<StatisticSeries> b = counterpart(*a, &why);
  CsvTable table;
  table.header << (isBlockTensor(*a) ? tr("slot") : tr("position"));
  const std::vector<std::string> names{"mean", "std", "rms", "absmax", "nan", "inf"};
  for (const auto& n : names) table.header << QString::fromStdString(n);
  if (b)
    for (const auto& n : names) table.header << QStringLiteral("B %1").arg(QString::fromStdString(n));
  if (b)
    for (const auto& n : names)
      if (n != "nan" && n != "inf") table.header << QStringLiteral("A-B %1").arg(QString::fromStdString(n));
  // Rows by position; B's row at the same position (it may start later, redraw()).
  const std::int64_t first = firstPosition(*a);
  const std::int64_t firstB = b ? firstPosition(*b) : first;
  auto at = [](const StatisticSeries& s, const std::string& n, std::int64_t i) -> std::optional<double> {
    const auto* v = s.stat(n);
    if (!v || i < 0 || i >= static_cast<std::int64_t>(v->size())) return std::nullopt;
    return static_cast<double>((*v)[static_cast<std::size_t>(i)]);
  };
  auto text = [](std::optional<double> v) { return v ? QString::number(*v, 'g', 7) : QString(); };
  for (std::size_t i = 0; i < a->positions(); ++i) {
    const std::int64_t position = first + static_cast<std::int64_t>(i);
    QStringList row{QString::number(position)};
    for (const auto& n : names) row << text(at(*a, n, position - first));
    if (b) {
      for (const auto& n : names) row << text(at(*b, n, position - firstB));
      for (const auto& n : names) {
        if (n == "nan" || n == "inf") continue;
        const auto x = at(*a, n, position - first), y = at(*b, n, position - firstB);
        row << (x && y ? QString::number(*x - *y, 'g', 7) : QString());
      }
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace dfi::ui
