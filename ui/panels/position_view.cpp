#include "panels/position_view.h"

#include <algorithm>
#include <numeric>

#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QRegularExpression>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "session/reload_when_shown.h"
#include "session/session_context.h"
#include "session/session_source.h"
#include "dfi/base/field_table.h"
#include "dfi/session/record_fields.h"
#include "models/tau_table_model.h"
#include "widgets/comparison_plots.h"
#include "widgets/empty_hint.h"
#include "widgets/integer_ticker.h"

namespace dfi::ui {
namespace {

QString number(double value) { return QString::number(value, 'g', 6); }

QString binLabel(std::int64_t begin, std::int64_t end) {
  auto shortNumber = [](std::int64_t n) {
    return n >= 1024 && n % 1024 == 0 ? QStringLiteral("%1k").arg(n / 1024) : QString::number(n);
  };
  return QStringLiteral("%1\u2013%2").arg(shortNumber(begin), shortNumber(end));
}

}  // namespace

PositionView::PositionView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      runsButton_(new QToolButton),
      runsMenu_(new QMenu(this)),
      status_(new QLabel),
      slotPlot_(makeLegendPlot(tr("Acceptance per draft slot"), tr("draft slot"), tr("fraction of steps accepting it"))),
      anchorPlot_(makeLegendPlot(tr("\u03c4 by anchor position"), tr("anchor position in the context"),
                                 tr("mean acceptance length"))),
      reliabilityPlot_(makeLegendPlot(tr("Drafter calibration"), tr("drafter's probability of its draft"),
                                      tr("fraction accepted"))),
      reloader_(new ReloadWhenShown(this, [this] { reload(); })) {
  pool_.setMaxThreadCount(1);
  runsButton_->setText(tr("Runs"));
  runsButton_->setToolTip(tr("The selected run is always drawn; tick others to overlay them"));
  runsButton_->setMenu(runsMenu_);
  runsButton_->setPopupMode(QToolButton::InstantPopup);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);
  slotPlot_->setToolTip(tr("For draft slot i, the fraction of steps whose slot i was accepted (all slots before it "
                           "accepted too): vLLM's per-position acceptance rate. 1 + the sum over slots is \u03c4 (vLLM). Dashed, "
                           "for teacher-forced runs: the same at T=1, the mean running product of each slot's "
                           "sum min(p, q) (its chance to be accepted by sampling after the true text); 1 + its sum is "
                           "the accept_len speculators' training log reports."));
  anchorPlot_->setToolTip(tr("Mean acceptance length of the steps whose anchor lies in each bin of positions, with "
                             "its 95% bootstrap interval over prompts: a fall where a sliding window or a long "
                             "context starts to hurt."));
  reliabilityPlot_->setToolTip(
      tr("The drafter's probability of the token it drafted (its top-k table) against how often that token was "
         "accepted, in ten bins of probability. Teacher-forced and DDTree steps: every slot, accepted when the draft "
         "equals the target's token there; live steps: the slots the verifier reached. On the diagonal the drafter "
         "is calibrated; below it, over-confident. DSpark drafters add a dashed curve: the confidence head's "
         "predicted survival of each draft prefix (the product of its slot confidences) against how often the "
         "prefix was all accepted, the figure a confidence-driven verify length thresholds."));
  slotPlot_->xAxis->setTicker(integerTicker());
  reliabilityPlot_->legend->setWrap(1);  // its names carry the ECE too: one a row
  for (QCustomPlot* plot : {slotPlot_, anchorPlot_, reliabilityPlot_})
    plot->legend->setIconSize(20, 10);  // the names need the room more than the line samples

  auto* top = new QHBoxLayout;
  top->addWidget(runsButton_);
  top->addWidget(status_, 1);
  auto* plots = new QHBoxLayout;
  for (QCustomPlot* plot : {slotPlot_, anchorPlot_, reliabilityPlot_}) plots->addWidget(plot, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(top);
  layout->addLayout(plots, 1);

  addExportMenu(slotPlot_, QStringLiteral("slot-acceptance"), [this] { return slotData_; });
  addExportMenu(anchorPlot_, QStringLiteral("tau-by-anchor-position"), [this] { return anchorData_; });
  addExportMenu(reliabilityPlot_, QStringLiteral("drafter-calibration"), [this] { return reliabilityData_; });
  if (context_) context_->addViewer(this);
  redraw();
}

PositionView::~PositionView() {
  if (context_) context_->removeViewer(this);
  ++generation_;
  pool_.waitForDone();  // a worker posts to this object; it must not outlive it
}

std::vector<session::RunId> PositionView::shownRuns() const {
  std::vector<session::RunId> runs;
  if (selected_) runs.push_back(selected_);
  for (session::RunId run : overlaid_)
    if (run != selected_) runs.push_back(run);
  return runs;
}

void PositionView::setRunOverlaid(session::RunId run, bool overlaid) {
  if (overlaid)
    overlaid_.insert(run);
  else
    overlaid_.erase(run);
  for (QAction* action : runsMenu_->actions())
    if (action->data().toLongLong() == run) action->setChecked(overlaid || run == selected_);
  reloader_->request();
}

void PositionView::rebuildRunsMenu() {
  runsMenu_->clear();
  if (!context_ || !context_->isOpen()) return;
  for (const session::RunRecord& run : context_->runs()) {
    QAction* action = runsMenu_->addAction(context_->runName(run.runId));
    action->setData(QVariant::fromValue<qlonglong>(run.runId));
    action->setCheckable(true);
    action->setChecked(run.runId == selected_ || overlaid_.contains(run.runId));
    action->setEnabled(run.runId != selected_);  // the selected run is always drawn
    connect(action, &QAction::toggled, this, [this, id = run.runId](bool on) { setRunOverlaid(id, on); });
  }
}

void PositionView::onSessionOpened() {
  ++generation_;
  cache_.clear();
  overlaid_.clear();
  selected_ = context_->selection().run;
  if (!selected_) {
    const auto runs = context_->runs();
    if (!runs.empty()) selected_ = runs.front().runId;
  }
  rebuildRunsMenu();
  reloader_->request();
}

void PositionView::onSessionClosed() {
  ++generation_;
  computing_ = false;
  reloader_->clear();
  cache_.clear();
  overlaid_.clear();
  selected_ = 0;
  runsMenu_->clear();
  redraw();
}

void PositionView::onSelectionChanged(const Selection& selection) {
  if (!selection.run || selection.run == selected_) return;
  selected_ = selection.run;
  rebuildRunsMenu();
  reloader_->request();
}

void PositionView::onStepsAppended(const std::vector<session::StepRecord>& steps) {
  for (const session::StepRecord& step : steps) cache_.erase(step.runId);
  rebuildRunsMenu();  // a new run may have started
  reloader_->requestSoon();
}

void PositionView::reload() {
  reloader_->clear();
  std::vector<session::RunId> missing;
  for (session::RunId run : shownRuns())
    if (!cache_.contains(run)) missing.push_back(run);
  const quint64 generation = ++generation_;
  if (missing.empty()) {
    computing_ = false;
    redraw();
    emit computed();
    return;
  }
  std::unique_ptr<SessionSource> source = context_ && context_->isOpen() ? context_->openSecondSource() : nullptr;
  if (!source) {  // no session, or it could not be opened again (reported)
    computing_ = false;
    redraw();
    emit computed();
    return;
  }
  computing_ = true;
  status_->setText(tr("Reading the steps..."));
  auto shared = std::shared_ptr<SessionSource>(std::move(source));
  pool_.start([this, generation, shared, missing] {
    std::map<session::RunId, std::vector<analysis::PositionMetrics>> read;
    QString error;
    try {
      for (const session::RunRecord& run : shared->runs()) {
        if (std::ranges::find(missing, run.runId) == missing.end()) continue;
        analysis::PositionTally tally(run);
        for (const session::PromptRecord& prompt : shared->prompts(run.runId))
          for (const session::StepRecord& step : shared->steps(run.runId, prompt.promptId)) tally.add(step);
        read[run.runId] = tally.finish();
      }
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, generation, read = std::move(read), error]() mutable { finish(generation, std::move(read), error); },
        Qt::QueuedConnection);
  });
}

void PositionView::finish(quint64 generation, std::map<session::RunId, std::vector<analysis::PositionMetrics>> read,
                          const QString& error) {
  if (generation != generation_) return;  // a newer reload, or the session changed
  computing_ = false;
  cache_.merge(read);
  if (!error.isEmpty()) context_->reportError(tr("Cannot read the steps"), error);
  redraw();
  emit computed();
}

std::vector<PositionView::Series> PositionView::shownSeries() {
  std::vector<Series> series;
  for (session::RunId run : shownRuns()) {
    const auto it = cache_.find(run);
    if (it == cache_.end()) continue;
    const QString name = context_->runName(run);
    for (const analysis::PositionMetrics& m : it->second) {
      if (m.steps == 0) continue;
      // The mode only where a run holds steps of several (a run's name already says its own).
      const std::string_view mode = enumName(m.mode);
      const QString label =
          it->second.size() > 1
              ? QStringLiteral("%1 (%2)").arg(name, QString::fromUtf8(mode.data(), static_cast<qsizetype>(mode.size())))
              : name;
      series.push_back({label, label, m});
    }
  }
  shortenLabels(series);
  return series;
}

// Run names share most of their parts ("drafter-good/live/reference" and
// "drafter-good/teacher-forced/reference"): in a legend two to a row under a third of the panel,
// the parts every curve shares are left out ("live", "teacher-forced") and said once in the
// status line ("drafter-good/*/reference"). A single curve is named there only (no legend).
void PositionView::shortenLabels(std::vector<Series>& series) {
  commonLabel_.clear();
  if (series.size() == 1) {
    commonLabel_ = series.front().label;
    series.front().label.clear();
  }
  if (series.size() < 2) return;
  std::vector<QStringList> parts;
  for (const Series& s : series) parts.push_back(s.label.split(QLatin1Char('/')));
  const auto count = parts.front().size();
  if (std::ranges::any_of(parts, [&](const QStringList& p) { return p.size() != count; })) return;
  QStringList common;
  std::vector<bool> shared(static_cast<std::size_t>(count));
  for (qsizetype i = 0; i < count; ++i) {
    shared[static_cast<std::size_t>(i)] =
        std::ranges::all_of(parts, [&](const QStringList& p) { return p[i] == parts.front()[i]; });
    common.push_back(shared[static_cast<std::size_t>(i)] ? parts.front()[i] : QStringLiteral("*"));
  }
  for (std::size_t k = 0; k < series.size(); ++k) {
    QStringList distinct;
    for (qsizetype i = 0; i < count; ++i)
      if (!shared[static_cast<std::size_t>(i)]) distinct.push_back(parts[k][i]);
    series[k].label = distinct.join(QLatin1Char('/'));
  }
  // Nothing shared ("*/*/*") says nothing.
  if (std::ranges::any_of(shared, [](bool b) { return b; })) commonLabel_ = common.join(QLatin1Char('/'));
}

void PositionView::redraw() {
  const std::vector<Series> series = shownSeries();
  // Two names a row under a third of the panel while they are short; one a row past that.
  const bool longNames = std::ranges::any_of(series, [](const Series& s) { return s.label.size() > 24; });
  for (QCustomPlot* plot : {slotPlot_, anchorPlot_}) plot->legend->setWrap(longNames ? 1 : 2);
  drawSlots(series);
  drawAnchors(series);
  drawReliability(series);
  const QString hint = !context_ || !context_->isOpen() ? tr("Open a session to see acceptance by position.")
                       : computing_                      ? QString()
                       : series.empty()                  ? tr("The selected run has no steps yet.")
                                                         : QString();
  for (QCustomPlot* plot : {slotPlot_, anchorPlot_}) setEmptyHint(plot, series.empty() ? hint : QString());
  const bool calibrated = std::ranges::any_of(series, [](const Series& s) {
    return s.metrics.calibration.scoredSlots > 0 || s.metrics.confidenceCalibration.scoredSlots > 0;
  });
  setEmptyHint(reliabilityPlot_, !series.empty() && !calibrated
                                     ? tr("No top-k probabilities were recorded for these runs (run with --record-top-k K).")
                                     : series.empty() ? hint : QString());
  if (!computing_) {
    std::int64_t steps = 0;
    for (const Series& s : series) steps += s.metrics.steps;
    const QString curves = series.size() == 1  ? commonLabel_
                           : commonLabel_.isEmpty() ? tr("%n curves", nullptr, static_cast<int>(series.size()))
                                                    : tr("%n curves of %1", nullptr, static_cast<int>(series.size()))
                                                          .arg(commonLabel_);
    status_->setText(series.empty()
                         ? QString()
                         : tr("%1, %2 steps; right-click a plot to save its picture or numbers").arg(curves).arg(steps));
  }
}

void PositionView::drawSlots(const std::vector<Series>& series) {
  slotPlot_->clearGraphs();
  slotData_ = {{tr("run"), tr("quantity"), tr("slot"), tr("steps"), tr("rate")}, {}};
  int slotCount = 1;
  // Per run the measured acceptance by slot (solid: the fraction of steps reaching and accepting
  // it) and, for teacher-forced steps that recorded their overlap, the same at T=1 from it (dashed:
  // the mean running product of sum min(p, q), named with the accept_len speculators' training
  // log would report, which is 1 + its sum as tau(vLLM) is the solid's). With dashed curves on the
  // plot every curve says which it is; without, a run's name is enough.
  const bool overlap = std::ranges::any_of(series, [](const Series& s) { return s.metrics.analyticAcceptLength.has_value(); });
  auto draw = [&](std::size_t i, const std::vector<double>& rates, bool analytic) {
    if (rates.empty()) return;
    const analysis::PositionMetrics& m = series[i].metrics;
    QCPGraph* graph = slotPlot_->addGraph();
    const QString what = analytic ? tr("T=1 from sum min(p,q), accept_len %1").arg(m.analyticAcceptLength->estimate, 0, 'f', 2)
                                  : tr("accepted, \u03c4 (vLLM) %1").arg(1 + std::accumulate(rates.begin(), rates.end(), 0.0), 0, 'f', 2);
    const QString& label = series[i].label;
    graph->setName(!overlap ? label : label.isEmpty() ? what : tr("%1, %2").arg(label, what));
    graph->setPen(QPen(TauTableModel::seriesColour(static_cast<int>(i)), 2, analytic ? Qt::DashLine : Qt::SolidLine));
    graph->setScatterStyle(QCPScatterStyle(analytic ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssCircle, 5));
    const QString quantity = analytic ? QStringLiteral("reached_t1") : QStringLiteral("accepted");
    for (std::size_t slot = 0; slot < rates.size(); ++slot) {
      graph->addData(static_cast<double>(slot + 1), rates[slot]);
      slotData_.rows.push_back(
          {series[i].name, quantity, QString::number(slot + 1), QString::number(m.steps), number(rates[slot])});
    }
    slotCount = std::max(slotCount, static_cast<int>(rates.size()));
  };
  for (std::size_t i = 0; i < series.size(); ++i) {
    draw(i, series[i].metrics.slotAcceptance, false);
    if (series[i].metrics.analyticAcceptLength) draw(i, series[i].metrics.slotOverlapSurvival, true);
  }
  slotPlot_->xAxis->setRange(0.5, slotCount + 0.5);
  slotPlot_->yAxis->setRange(0, 1.02);
  slotPlot_->yAxis->setLabel(overlap ? tr("accepted (solid); chance at T=1 (dashed)")
                                   : tr("fraction of steps accepting it"));
  slotPlot_->legend->setVisible(series.size() > 1 || overlap);
  slotPlot_->replot(QCustomPlot::rpQueuedReplot);
}

void PositionView::drawAnchors(const std::vector<Series>& series) {
  anchorPlot_->clearPlottables();
  anchorData_ = {{tr("run"), tr("anchor_from"), tr("anchor_to"), tr("steps"), tr("prompts"), tr("tau"), tr("ci_low"),
                  tr("ci_high")},
                 {}};
  // Bins sit at their index (the first is 32 wide, then they double), named by their range;
  // the runs' points are spread a little around it so that their intervals do not overlap.
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  int lastBin = 0;
  double top = 1;
  const double spread = series.size() > 1 ? 0.3 / static_cast<double>(series.size() - 1) : 0;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double offset = series.size() > 1 ? -0.15 + spread * static_cast<double>(i) : 0;
    QCPGraph* graph = anchorPlot_->addGraph();
    const QColor colour = TauTableModel::seriesColour(static_cast<int>(i));
    graph->setName(series[i].label);
    graph->setPen(QPen(colour, 2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 5));
    auto* bars = new QCPErrorBars(anchorPlot_->xAxis, anchorPlot_->yAxis);
    bars->removeFromLegend();
    bars->setDataPlottable(graph);
    bars->setPen(QPen(colour, 1));
    QVector<double> minus, plus;
    for (const analysis::AnchorBinTau& b : series[i].metrics.anchorBins) {
      const int bin = analysis::anchorBinOf(b.begin);
      graph->addData(bin + offset, b.meanLength.estimate);
      minus.push_back(b.meanLength.estimate - b.meanLength.low);
      plus.push_back(b.meanLength.high - b.meanLength.estimate);
      ticker->addTick(bin, binLabel(b.begin, b.end));
      lastBin = std::max(lastBin, bin);
      top = std::max(top, b.meanLength.high);
      anchorData_.rows.push_back({series[i].name, QString::number(b.begin), QString::number(b.end),
                                  QString::number(b.steps), QString::number(b.prompts), number(b.meanLength.estimate),
                                  number(b.meanLength.low), number(b.meanLength.high)});
    }
    bars->setData(minus, plus);
  }
  anchorPlot_->xAxis->setTicker(ticker);
  anchorPlot_->xAxis->grid()->setZeroLinePen(Qt::NoPen);  // bin 0 is a category, not a zero
  anchorPlot_->xAxis->setRange(-0.5, lastBin + 0.5);
  anchorPlot_->yAxis->setRange(0, top * 1.08);
  anchorPlot_->legend->setVisible(series.size() > 1);
  anchorPlot_->replot(QCustomPlot::rpQueuedReplot);
}

void PositionView::drawReliability(const std::vector<Series>& series) {
  reliabilityPlot_->clearGraphs();
  reliabilityPlot_->clearItems();
  reliabilityData_ = {{tr("run"), tr("prediction"), tr("probability_from"), tr("probability_to"), tr("slots"),
                       tr("mean_probability"), tr("accepted_fraction"), tr("ece")},
                      {}};
  auto* diagonal = new QCPItemStraightLine(reliabilityPlot_);
  diagonal->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  diagonal->point1->setCoords(0, 0);
  diagonal->point2->setCoords(1, 1);
  // The drafter's probability of its draft (solid), and for DSpark drafters the confidence
  // head's predicted prefix survival against survival (dashed, its own name in the legend).
  auto draw = [&](std::size_t i, const analysis::Calibration& c, bool confidence) {
    if (c.scoredSlots == 0) return;
    QCPGraph* graph = reliabilityPlot_->addGraph();
    const QColor colour = TauTableModel::seriesColour(static_cast<int>(i));
    // ".054", not "0.054": the legend has a third of the panel's width.
    const QString ece = QString::number(c.expectedCalibrationError, 'f', 3).remove(QRegularExpression(QStringLiteral("^0(?=\\.)")));
    const QString what = confidence ? tr("confidence, ECE %1").arg(ece) : tr("ECE %1").arg(ece);
    graph->setName(series[i].label.isEmpty() ? what : tr("%1, %2").arg(series[i].label, what));
    graph->setPen(QPen(colour, 2, confidence ? Qt::DashLine : Qt::SolidLine));
    graph->setScatterStyle(QCPScatterStyle(confidence ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssCircle, 5));
    for (const analysis::ReliabilityBin& r : c.bins) {
      if (r.count == 0) continue;
      graph->addData(r.meanProbability, r.acceptedFraction);
      reliabilityData_.rows.push_back({series[i].name, confidence ? tr("confidence") : tr("draft"), number(r.begin),
                                       number(r.end), QString::number(r.count), number(r.meanProbability),
                                       number(r.acceptedFraction), number(c.expectedCalibrationError)});
    }
  };
  bool confidence = false;
  for (std::size_t i = 0; i < series.size(); ++i) {
    draw(i, series[i].metrics.calibration, false);
    draw(i, series[i].metrics.confidenceCalibration, true);
    confidence = confidence || series[i].metrics.confidenceCalibration.scoredSlots > 0;
  }
  reliabilityPlot_->xAxis->setLabel(confidence ? tr("predicted: the draft (solid), its prefix surviving (dashed)")
                                               : tr("drafter's probability of its draft"));
  reliabilityPlot_->xAxis->setRange(0, 1);
  reliabilityPlot_->yAxis->setRange(0, 1.02);
  reliabilityPlot_->legend->setVisible(reliabilityPlot_->graphCount() > 0);
  reliabilityPlot_->replot(QCustomPlot::rpQueuedReplot);
}

CsvTable PositionView::exportData() {
  CsvTable table{{tr("plot"), tr("run"), tr("x_from"), tr("x_to"), tr("count"), tr("y"), tr("y_low"), tr("y_high")}, {}};
  for (const QStringList& r : slotData_.rows)
    table.rows.push_back({r[1] == QStringLiteral("reached_t1") ? QStringLiteral("slot_overlap_survival")
                                                                : QStringLiteral("slot_acceptance"),
                          r[0], r[2], r[2], r[3], r[4], r[4], r[4]});
  for (const QStringList& r : anchorData_.rows)
    table.rows.push_back({QStringLiteral("tau_by_anchor_position"), r[0], r[1], r[2], r[3], r[5], r[6], r[7]});
  for (const QStringList& r : reliabilityData_.rows)
    table.rows.push_back({r[1] == tr("confidence") ? QStringLiteral("confidence_reliability") : QStringLiteral("reliability"),
                          r[0], r[2], r[3], r[4], r[6], r[6], r[6]});
  return table;
}

}  // namespace dfi::ui
