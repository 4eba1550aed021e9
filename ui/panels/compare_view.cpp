#include "panels/compare_view.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "session/reload_when_shown.h"
#include "session/session_context.h"
#include "session/session_source.h"
#include "session/worker_result.h"
#include "dfi/analysis/alignment.h"
#include "models/block_regression_model.h"
#include "models/tau_table_model.h"
#include "widgets/comparison_plots.h"
#include "widgets/empty_hint.h"
#include "panels/block_pair_view.h"

namespace dfi::ui {
namespace {

// A session with an imported run (`dflash-eval import`) opens on the last one (B) against the
// reference it was aligned with (A): the regressions list then starts at their largest drops.
std::optional<std::pair<int, int>> importedPair(const std::vector<session::RunRecord>& runs,
                                                const std::vector<analysis::ComparedSeries>& series) {
  auto row = [&](session::RunId id) {
    const auto it = std::ranges::find(series, id, &analysis::ComparedSeries::run);
    return it == series.end() ? -1 : static_cast<int>(it - series.begin());
  };
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    const auto import = analysis::importAlignment(*run);
    if (!import) continue;
    const int a = row(import->referenceRun), b = row(run->runId);
    if (a >= 0 && b >= 0) return std::pair{a, b};
  }
  return std::nullopt;
}

}  // namespace

namespace {


QTableView* makeTable(QAbstractItemModel* model) {
  auto* table = new QTableView;
  table->setModel(model);
  table->verticalHeader()->hide();
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  return table;
}

}  // namespace

struct CompareView::Result {
  std::shared_ptr<const std::vector<analysis::ComparedSeries>> series;
  std::shared_ptr<const std::vector<analysis::SeriesStatistics>> stats;
  analysis::PairComparison pair;
  int a = -1, b = -1;
  QString error;

  // The statistics when not known yet, then the A/B pair when both are runs.
  void compute() {
    if (!stats) stats = std::make_shared<const std::vector<analysis::SeriesStatistics>>(analysis::summarizeSeries(*series));
    const int n = static_cast<int>(series->size());
    if (a >= 0 && b >= 0 && a < n && b < n && a != b)
      pair = analysis::comparePair((*series)[static_cast<std::size_t>(a)], (*stats)[static_cast<std::size_t>(a)],
                         (*series)[static_cast<std::size_t>(b)], (*stats)[static_cast<std::size_t>(b)]);
  }
};

CompareView::CompareView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      tauModel_(new TauTableModel(this)),
      regressionModel_(new BlockRegressionModel(this)),
      runA_(new QComboBox),
      runB_(new QComboBox),
      status_(new QLabel(tr("Open a session with two or more runs to compare them."))),
      tauTable_(makeTable(tauModel_)),
      regressionTable_(makeTable(regressionModel_)),
      plots_(new ComparisonPlots),
      blockPair_(new BlockPairView(context)),
      lowerTabs_(new QTabWidget),
      reloader_(new ReloadWhenShown(this, [this] { reload(); })) {
  pool_.setMaxThreadCount(1);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);
  for (QComboBox* box : {runA_, runB_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(16);
    connect(box, &QComboBox::currentIndexChanged, this, [this] { setPair(runA_->currentIndex(), runB_->currentIndex()); });
  }
  runA_->setToolTip(tr("Run A: the baseline"));
  runB_->setToolTip(tr("Run B: compared against A"));
  connect(tauModel_, &TauTableModel::shownChanged, this, &CompareView::redraw);
  connect(regressionTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { selectRegression(current); });

  auto* pairRow = new QHBoxLayout;
  pairRow->addWidget(new QLabel(tr("A")));
  pairRow->addWidget(runA_, 1);
  pairRow->addWidget(new QLabel(tr("B")));
  pairRow->addWidget(runB_, 1);
  auto* regressions = new QWidget;
  auto* regressionLayout = new QVBoxLayout(regressions);
  regressionLayout->setContentsMargins(0, 0, 0, 0);
  auto* regressionTitle = new QLabel(tr("Blocks where B fell behind A"));
  regressionTitle->setToolTip(tr("Blocks at the same prompt and anchor where B accepted fewer drafts than A, the "
                                 "largest drop first; "
                                 "choose one to inspect it in every panel"));
  regressionTitle->setWordWrap(true);
  regressionLayout->addWidget(regressionTitle);
  regressionLayout->addWidget(regressionTable_, 1);
  // The two tables side by side above the plots, so a short dock shows all three parts.
  auto* tables = new QSplitter(Qt::Horizontal);
  tables->addWidget(tauTable_);
  tables->addWidget(regressions);
  tables->setStretchFactor(0, 3);
  tables->setStretchFactor(1, 2);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(tables);
  // The plots, and the chosen regression's two blocks behind them.
  lowerTabs_->addTab(plots_, tr("Plots"));
  lowerTabs_->addTab(blockPair_, tr("Chosen block: A | B"));
  lowerTabs_->setDocumentMode(true);
  splitter->addWidget(lowerTabs_);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 2);
  splitter->setSizes({100, 200});
  for (QTableView* table : {tauTable_, regressionTable_}) table->setMinimumHeight(3 * fontMetrics().height());  // proportions: the plots take two thirds of any height
  // Below this the plots' ticks and titles run into each other (a 1280x720 screen shares the
  // dock column with the block panels): the panel scrolls instead.
  lowerTabs_->setMinimumHeight(16 * fontMetrics().height());
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(pairRow);
  layout->addWidget(status_);
  layout->addWidget(splitter, 1);

  addExportMenu(plots_->histogram(), QStringLiteral("acceptance-histogram"), [this] { return plots_->histogramData(); });
  addExportMenu(plots_->slotCurves(), QStringLiteral("slot-acceptance"), [this] { return plots_->slotCurveData(); });
  addExportMenu(plots_->scatter(), QStringLiteral("prompt-tau-scatter"), [this] { return plots_->scatterData(); });
  addExportMenu(tauTable_, QStringLiteral("tau-table"), [this] { return exportData(); });
  addExportMenu(regressionTable_, QStringLiteral("block-regressions"), [this] { return csvOf(*regressionModel_); });
  if (context_) context_->addViewer(this);
  redraw();
}

CompareView::~CompareView() {
  if (context_) context_->removeViewer(this);
  ++generation_;
  pool_.waitForDone();  // a worker posts to this object; it must not outlive it
}

CsvTable CompareView::exportData() { return csvOf(*tauModel_); }

bool CompareView::isStale() const { return reloader_->isStale(); }

void CompareView::reload() {
  reloader_->clear();
  std::unique_ptr<SessionSource> source = context_ && context_->isOpen() ? context_->openSecondSource() : nullptr;
  if (!source) {  // no session, or it could not be opened again (reported)
    setSeries({});
    return;
  }
  const quint64 generation = ++generation_;
  computing_ = true;
  status_->setText(tr("Reading the runs..."));
  auto shared = std::shared_ptr<SessionSource>(std::move(source));
  computeOnWorker(pool_, this, &CompareView::finish, generation, std::make_shared<Result>(), [shared](Result& result) {
    const auto runs = shared->runs();
    result.series = std::make_shared<const std::vector<analysis::ComparedSeries>>(analysis::loadComparedSeries(
        runs, [&](session::RunId run, const auto& visit) { shared->forEachStepSummary(run, visit); }));
    result.a = 0;
    result.b = result.series->size() > 1 ? 1 : -1;
    if (const auto pair = importedPair(runs, *result.series)) std::tie(result.a, result.b) = *pair;
    result.compute();
  });
}

void CompareView::setSeries(std::vector<analysis::ComparedSeries> series) {
  const int b = series.size() > 1 ? 1 : -1;
  start(std::make_shared<const std::vector<analysis::ComparedSeries>>(std::move(series)), nullptr, 0, b);
}

void CompareView::setPair(int a, int b) {
  if (!series_ || !stats_ || (a == a_ && b == b_)) return;
  start(series_, stats_, a, b);
}

void CompareView::requestRuns(session::RunId a, session::RunId b) {
  requested_ = std::pair{a, b};
  if (series_ && stats_ && !computing_ && !isStale()) applyRequest();
}

// The requested runs as rows of the tau table, once the runs are read.
void CompareView::applyRequest() {
  const auto [a, b] = *requested_;
  requested_.reset();
  const auto row = [this](session::RunId run) {
    const auto it = std::ranges::find(*series_, run, &analysis::ComparedSeries::run);
    return it == series_->end() ? -1 : static_cast<int>(it - series_->begin());
  };
  if (row(a) >= 0 && row(b) >= 0) setPair(row(a), row(b));
}

void CompareView::start(std::shared_ptr<const std::vector<analysis::ComparedSeries>> series,
                        std::shared_ptr<const std::vector<analysis::SeriesStatistics>> stats, int a, int b) {
  const quint64 generation = ++generation_;
  computing_ = true;
  auto result = std::make_shared<Result>();
  result->series = std::move(series);
  result->stats = std::move(stats);
  result->a = a;
  result->b = b;
  computeOnWorker(pool_, this, &CompareView::finish, generation, std::move(result), [](Result& r) { r.compute(); });
}

void CompareView::finish(quint64 generation, const std::shared_ptr<Result>& result) {
  if (generation != generation_) return;
  computing_ = false;
  if (!result->error.isEmpty()) {
    if (context_) context_->reportError(tr("Cannot compare the runs"), result->error);
    status_->setText(tr("Cannot compare the runs: %1").arg(result->error));
    emit computed();
    return;
  }
  const bool newRuns = result->stats != stats_;
  const bool newPair = newRuns || result->a != a_ || result->b != b_;
  series_ = result->series;
  stats_ = result->stats;
  a_ = result->a;
  b_ = result->b;
  pair_ = std::move(result->pair);
  if (newRuns) {
    tauModel_->setRows(*series_, *stats_);
    for (QComboBox* box : {runA_, runB_}) {
      const QSignalBlocker block(box);
      box->clear();
      for (const analysis::ComparedSeries& s : *series_) box->addItem(QString::fromStdString(s.label));
    }
  }
  for (auto [box, row] : {std::pair{runA_, a_}, std::pair{runB_, b_}}) {
    const QSignalBlocker block(box);
    box->setCurrentIndex(row);
  }
  // The plots show the pair being compared; other runs can be ticked in beside it.
  if (newPair) {
    tauModel_->setShownRows(a_ == b_ ? std::vector<int>{a_} : std::vector<int>{a_, b_});
  }
  regressionModel_->setRegressions(pair_.regressions);
  if (newPair) {
    blockPair_->clear();
    lowerTabs_->setCurrentWidget(plots_);
  }
  if (series_->size() < 2) {
    status_->setText(series_->empty() ? tr("Open a session with two or more runs to compare them.")
                                      : tr("The session has one run: nothing to compare it with."));
  } else if (a_ == b_) {
    status_->setText(tr("Choose two different runs as A and B."));
  } else {
    status_->setText(tr("%1 runs. A vs B: %2 prompts answered by both, %3 blocks at the same anchors, %4 where B "
                        "accepted less")
                         .arg(series_->size())
                         .arg(pair_.prompts.size())
                         .arg(pair_.matchedBlocks)
                         .arg(pair_.regressions.size()));
  }
  redraw();
  emit computed();
  // A pair asked for while the runs were being read.
  if (requested_) applyRequest();
}

void CompareView::redraw() {
  const bool empty = !series_ || !stats_ || series_->size() < 2 || a_ == b_;
  for (QCustomPlot* plot : {plots_->histogram(), plots_->slotCurves(), plots_->scatter()})
    setEmptyHint(plot, empty ? status_->text() : QString());
  if (!series_ || !stats_) {
    plots_->clear();
    return;
  }
  plots_->draw(*series_, *stats_, tauModel_->shownRows(), a_, b_, pair_);
}

void CompareView::selectRegression(const QModelIndex& index) {
  if (!context_ || !index.isValid() || !series_ || b_ < 0) return;
  const analysis::BlockRegression& r = regressionModel_->regression(index.row());
  context_->select({(*series_)[static_cast<std::size_t>(b_)].run, r.prompt, r.stepB});
  blockPair_->showPair(r.stepA, r.stepB);
  lowerTabs_->setCurrentWidget(blockPair_);
}

void CompareView::onSessionOpened() { reloader_->request(); }

void CompareView::onSessionClosed() { reloader_->request(); }

void CompareView::onStepsAppended(const std::vector<session::StepRecord>&) { reloader_->requestSoon(); }

}  // namespace dfi::ui
