#include "panels/what_if_view.h"

#include <algorithm>
#include <fstream>

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include "dfi/base/error.h"
#include "models/tau_table_model.h"
#include "session/reload_when_shown.h"
#include "session/session_context.h"
#include "session/session_source.h"
#include "widgets/comparison_plots.h"
#include "widgets/empty_hint.h"

namespace dfi::ui {
namespace {

QString csvNumber(double value) { return QString::number(value, 'g', 6); }
QString intervalText(const analysis::Interval& i, const char* unit = "") {
  return QStringLiteral("%1%4 [%2, %3]").arg(i.estimate, 0, 'f', 2).arg(i.low, 0, 'f', 2).arg(i.high, 0, 'f', 2).arg(
      QString::fromUtf8(unit));
}

// One curve per kind of setting: the chain verified up to v tokens, the DDTree budgets, and
// (DSpark) the verify lengths thresholds on the confidence head choose, at their mean.
constexpr analysis::WhatIfKind kWhatIfKinds[] = {analysis::WhatIfKind::VerifyLength, analysis::WhatIfKind::TreeBudget,
                                                 analysis::WhatIfKind::ConfidenceThreshold};
QString whatIfKindName(analysis::WhatIfKind kind) {
  switch (kind) {
    case analysis::WhatIfKind::VerifyLength: return QObject::tr("verify length v");
    case analysis::WhatIfKind::TreeBudget: return QObject::tr("DDTree budget N");
    case analysis::WhatIfKind::ConfidenceThreshold: return QObject::tr("confidence threshold");
  }
  return {};
}

}  // namespace

WhatIfView::WhatIfView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      status_(new QLabel),
      costButton_(new QPushButton(tr("Cost model..."))),
      table_(new QTableWidget(0, 4)),
      tauPlot_(makeLegendPlot(tr("\u03c4 by verified tokens"), tr("tokens the target verifies per step"),
                              tr("mean acceptance length"))),
      speedupPlot_(makeLegendPlot(tr("Expected speedup"), tr("tokens the target verifies per step"),
                                  tr("speedup over target-only decoding"))),
      reloader_(new ReloadWhenShown(this, [this] { reload(); })) {
  pool_.setMaxThreadCount(1);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);
  costButton_->setToolTip(tr("Load a cost model (JSON: {\"target_ms\": {\"1\": 21.0, \"16\": 24.5}, \"drafter_ms\": "
                             "3.1}), e.g. measured on the serving GPU; cancel to use the run's own calibration"));
  connect(costButton_, &QPushButton::clicked, this, &WhatIfView::chooseCostFile);
  table_->setHorizontalHeaderLabels({tr("setting"), tr("verifies"), tr("\u03c4 [95% CI]"), tr("speedup [95% CI]")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setToolTip(tr("verify v: the whole block drafted, its first v tokens verified (a drafter run at block size v "
                        "drafts differently: measure that with run --block-size v). ddtree-N: the tree of N nodes "
                        "from the stored top-k, verifying N + 1 tokens."));
  for (QCustomPlot* plot : {tauPlot_, speedupPlot_}) plot->legend->setIconSize(20, 10);

  auto* top = new QHBoxLayout;
  top->addWidget(status_, 1);
  top->addWidget(costButton_);
  // The table beside the plots, the plots one above the other: at 1280 x 720 the panel is about
  // 850 pixels wide, the table's columns take half of it.
  auto* plots = new QSplitter(Qt::Vertical);
  plots->addWidget(tauPlot_);
  plots->addWidget(speedupPlot_);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(table_);
  split->addWidget(plots);
  split->setStretchFactor(0, 0);  // the table keeps its columns' width, the plots take the rest
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(top);
  layout->addWidget(split, 1);

  addExportMenu(tauPlot_, QStringLiteral("what-if-tau"), [this] { return exportData(); });
  addExportMenu(speedupPlot_, QStringLiteral("what-if-speedup"), [this] { return exportData(); });
  if (context_) context_->addViewer(this);
  redraw();
}

WhatIfView::~WhatIfView() {
  if (context_) context_->removeViewer(this);
  ++generation_;
  pool_.waitForDone();  // a worker posts to this object; it must not outlive it
}

void WhatIfView::onSessionOpened() {
  ++generation_;
  cache_.clear();
  selected_ = context_->selection().run;
  if (!selected_) {
    const auto runs = context_->runs();
    const auto teacherForced = std::ranges::find(runs, session::EvaluationMode::TeacherForced, &session::RunRecord::mode);
    if (teacherForced != runs.end()) selected_ = teacherForced->runId;
  }
  reloader_->request();
}

void WhatIfView::onSessionClosed() {
  ++generation_;
  computing_ = false;
  reloader_->clear();
  cache_.clear();
  selected_ = 0;
  recompute();
}

void WhatIfView::onSelectionChanged(const Selection& selection) {
  if (!selection.run || selection.run == selected_) return;
  selected_ = selection.run;
  reloader_->request();
}

void WhatIfView::onStepsAppended(const std::vector<session::StepRecord>& steps) {
  for (const session::StepRecord& step : steps) cache_.erase(step.runId);
  reloader_->requestSoon();
}

void WhatIfView::reload() {
  reloader_->clear();
  const quint64 generation = ++generation_;
  std::unique_ptr<SessionSource> source =
      selected_ && !cache_.contains(selected_) && context_ && context_->isOpen() ? context_->openSecondSource() : nullptr;
  if (!source) {  // read already, nothing selected, or the session could not be opened again (reported)
    computing_ = false;
    recompute();
    emit computed();
    return;
  }
  computing_ = true;
  status_->setText(tr("Reading the steps..."));
  auto shared = std::shared_ptr<SessionSource>(std::move(source));
  pool_.start([this, generation, shared, run = selected_] {
    std::optional<RunRead> read;
    QString error;
    try {
      for (const session::RunRecord& record : shared->runs()) {
        if (record.runId != run) continue;
        read.emplace();
        read->blockSize = record.blockSize;
        read->topK = record.topK;
        read->treeBudgets = analysis::treeBudgetsFor(record);
        read->teacherForced = record.mode == session::EvaluationMode::TeacherForced;
        if (read->teacherForced)
          for (const session::PromptRecord& prompt : shared->prompts(run))
            for (session::StepRecord& step : shared->steps(run, prompt.promptId)) read->steps.push_back(std::move(step));
        read->cost = analysis::costFromStatistics(shared->statistics(run, 0),
                                                  "calibrated in this run on " + record.device);
      }
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, generation, run, read = std::move(read), error]() mutable { finish(generation, run, std::move(read), error); },
        Qt::QueuedConnection);
  });
}

void WhatIfView::finish(quint64 generation, session::RunId run, std::optional<RunRead> read, const QString& error) {
  if (generation != generation_) return;  // a newer reload, or the session changed
  computing_ = false;
  if (read) cache_[run] = std::move(*read);
  if (!error.isEmpty()) context_->reportError(tr("Cannot read the steps"), error);
  recompute();
  emit computed();
}

bool WhatIfView::loadCostModel(const QString& path) {
  if (path.isEmpty()) {
    loadedCost_.reset();
    recompute();
    return true;
  }
  try {
    std::ifstream in(path.toStdString());
    if (!in) throw IoError("cannot read the cost model", {.file = path.toStdString()});
    const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
    if (json.is_discarded()) throw FormatError("the cost model is not JSON", {.file = path.toStdString()});
    loadedCost_ = analysis::parseCostModel(json, path.toStdString());
  } catch (const Error& e) {
    if (context_) context_->reportError(tr("Cannot use the cost model"), QString::fromStdString(e.what()));
    return false;
  }
  recompute();
  return true;
}

void WhatIfView::chooseCostFile() {
  loadCostModel(QFileDialog::getOpenFileName(this, tr("Cost model"), QString(), tr("Cost model (*.json)")));
}

void WhatIfView::recompute() {
  rows_.clear();
  cost_.reset();
  const auto it = cache_.find(selected_);
  if (it != cache_.end() && it->second.teacherForced) {
    const RunRead& run = it->second;
    cost_ = loadedCost_ ? loadedCost_ : run.cost;
    try {
      rows_ = analysis::budgetWhatIfs({.steps = run.steps,
                                       .blockSize = run.blockSize,
                                       .topK = run.topK,
                                       .treeBudgets = run.treeBudgets},
                                      cost_);
    } catch (const Error& e) {  // steps that do not fit their run record: a damaged file
      if (context_) context_->reportError(tr("Cannot compute the what-ifs"), QString::fromStdString(e.what()));
    }
  }
  redraw();
}

void WhatIfView::redraw() {
  fillTable();
  drawTau();
  drawSpeedup();
  const auto it = cache_.find(selected_);
  const bool open = context_ && context_->isOpen();
  const QString hint = !open ? tr("Open a session to see what other verify lengths and tree budgets would give.")
                       : computing_ ? QString()
                       : it != cache_.end() && !it->second.teacherForced
                           ? tr("Select a teacher-forced run: the what-ifs are computed from its blocks.")
                           : rows_.empty() ? tr("The selected run has no steps yet.")
                                           : QString();
  setEmptyHint(tauPlot_, hint);
  setEmptyHint(speedupPlot_, !hint.isEmpty() ? hint
                             : cost_       ? QString()
                                           : tr("No cost model: run with --calibrate-cost, or load one (Cost model...)."));
  if (computing_) return;
  const auto best = std::ranges::find_if(rows_, &analysis::WhatIfRow::best);
  QString text = open && selected_ ? context_->runName(selected_) : QString();
  if (!rows_.empty()) text += tr(", %n prompts", nullptr, static_cast<int>(rows_.front().prompts));
  if (!rows_.empty())
    text += cost_ ? tr(" \u2014 costs: %1").arg(QString::fromStdString(cost_->source))
                  : tr(" \u2014 no cost model");
  if (best != rows_.end())
    text += tr(" \u2014 best: %1, %2x").arg(QString::fromStdString(best->label())).arg(best->speedup->estimate, 0, 'f', 2);
  status_->setText(text);
}

void WhatIfView::fillTable() {
  table_->setRowCount(static_cast<int>(rows_.size()));
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    const analysis::WhatIfRow& row = rows_[static_cast<std::size_t>(r)];
    const QStringList cells{QString::fromStdString(row.label()) + (row.best ? tr("  (best)") : QString()),
                            row.kind == analysis::WhatIfKind::ConfidenceThreshold
                                ? QString::number(row.meanVerifiedTokens, 'f', 1)
                                : QString::number(row.verifiedTokens),
                            intervalText(row.tau),
                            row.speedup ? intervalText(*row.speedup, "x") : tr("\u2014")};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (row.best) {
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
      }
      table_->setItem(r, c, item);
    }
  }
  // The whole table in view beside the plots: its columns' width, no horizontal scrolling.
  int width = table_->frameWidth() * 2 + table_->verticalScrollBar()->sizeHint().width();
  for (int c = 0; c < table_->columnCount(); ++c) width += table_->horizontalHeader()->sectionSize(c);
  table_->setMinimumWidth(width);
}

namespace {

// One curve per kind over the tokens verified (log scale, ticks at the powers of two), with the
// intervals as bars; `markBest` labels the best setting's point.
template <typename ValueOf>
void drawCurves(QCustomPlot* plot, const std::vector<analysis::WhatIfRow>& rows, ValueOf valueOf, bool markBest) {
  plot->clearPlottables();
  plot->clearItems();
  double top = 1;
  int colour = 0;
  for (const analysis::WhatIfKind kind : kWhatIfKinds) {
    QCPGraph* graph = plot->addGraph();
    const QColor c = TauTableModel::seriesColour(colour++);
    graph->setName(whatIfKindName(kind));
    graph->setPen(QPen(c, 2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 5));
    auto* bars = new QCPErrorBars(plot->xAxis, plot->yAxis);
    bars->removeFromLegend();
    bars->setDataPlottable(graph);
    bars->setPen(QPen(c, 1));
    QVector<double> minus, plus;
    for (const analysis::WhatIfRow& row : rows) {
      const std::optional<analysis::Interval> value = valueOf(row);
      if (row.kind != kind || !value) continue;
      graph->addData(row.meanVerifiedTokens, value->estimate);
      minus.push_back(value->estimate - value->low);
      plus.push_back(value->high - value->estimate);
      top = std::max(top, value->high);
      if (row.best && markBest) {
        auto* mark = new QCPItemText(plot);
        mark->position->setCoords(row.meanVerifiedTokens, value->high);
        mark->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        mark->setText(QObject::tr("best"));
      }
    }
    bars->setData(minus, plus);
    if (graph->dataCount() == 0) graph->removeFromLegend();
  }
  plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  int widest = 2;
  for (const analysis::WhatIfRow& row : rows) widest = std::max(widest, row.verifiedTokens);
  for (int n = 2; n <= 2 * widest; n *= 2) ticker->addTick(n, QString::number(n));
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setTickLabelRotation(0);
  plot->xAxis->setRange(1.6, widest * 1.25);
  plot->yAxis->setRange(0, top * 1.12);
  plot->legend->setVisible(!rows.empty());
  plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace

void WhatIfView::drawTau() {
  drawCurves(tauPlot_, rows_, [](const analysis::WhatIfRow& r) { return std::optional(r.tau); }, false);
}

void WhatIfView::drawSpeedup() {
  drawCurves(speedupPlot_, rows_, [](const analysis::WhatIfRow& r) { return r.speedup; }, true);
  if (!cost_ || rows_.empty()) return;
  // Break-even with target-only decoding: below it, speculation costs more than it saves.
  auto* even = new QCPItemStraightLine(speedupPlot_);
  even->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  even->point1->setCoords(1, 1);
  even->point2->setCoords(2, 1);
  speedupPlot_->yAxis->setRange(0, std::max(speedupPlot_->yAxis->range().upper, 1.12));
  speedupPlot_->replot(QCustomPlot::rpQueuedReplot);
}

CsvTable WhatIfView::exportData() {
  CsvTable table{{tr("run"), tr("setting"), tr("verified_tokens"), tr("prompts"), tr("tau"), tr("tau_ci_low"),
                  tr("tau_ci_high"), tr("speedup"), tr("speedup_ci_low"), tr("speedup_ci_high"), tr("best"),
                  tr("cost_source")},
                 {}};
  const QString run = context_ && selected_ ? context_->runName(selected_) : QString();
  for (const analysis::WhatIfRow& r : rows_)
    table.rows.push_back({run, QString::fromStdString(r.label()), csvNumber(r.meanVerifiedTokens),
                          QString::number(r.prompts), csvNumber(r.tau.estimate), csvNumber(r.tau.low), csvNumber(r.tau.high),
                          r.speedup ? csvNumber(r.speedup->estimate) : QString(),
                          r.speedup ? csvNumber(r.speedup->low) : QString(), r.speedup ? csvNumber(r.speedup->high) : QString(),
                          r.best ? QStringLiteral("1") : QStringLiteral("0"),
                          cost_ ? QString::fromStdString(cost_->source) : QString()});
  return table;
}

}  // namespace dfi::ui
