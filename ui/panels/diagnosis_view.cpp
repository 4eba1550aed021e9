#include "panels/diagnosis_view.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTableView>
#include <QTreeView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "session/reload_when_shown.h"
#include "session/session_context.h"
#include "session/session_source.h"
#include "session/worker_result.h"
#include "dfi/analysis/finding_words.h"
#include "dfi/session/record_fields.h"
#include "models/block_regression_model.h"
#include "models/diagnosis_model.h"
#include "widgets/interval_bar_delegate.h"
#include "panels/compare_view.h"

namespace dfi::ui {
namespace {

QString fixed(double value) { return QString::number(value, 'f', 2); }

QIcon severityIcon(const QWidget* widget, analysis::LintSeverity severity) {
  switch (severity) {
    case analysis::LintSeverity::Error: return widget->style()->standardIcon(QStyle::SP_MessageBoxCritical);
    case analysis::LintSeverity::Warning: return widget->style()->standardIcon(QStyle::SP_MessageBoxWarning);
    case analysis::LintSeverity::Info: return widget->style()->standardIcon(QStyle::SP_MessageBoxInformation);
  }
  return {};
}

QColor severityColour(analysis::LintSeverity severity) {
  switch (severity) {
    case analysis::LintSeverity::Error: return IntervalBarDelegate::below();
    case analysis::LintSeverity::Warning: return QColor(191, 120, 0);
    case analysis::LintSeverity::Info: return QColor(50, 110, 190);
  }
  return {};
}

}  // namespace

struct DiagnosisView::Result {
  std::vector<analysis::Diagnosis> diagnoses;
  std::map<session::RunId, int> teacherForcedSeries;  // run -> the compare view's series of its teacher-forced steps
  QString error;

  void compute(SessionSource& source) {
    const std::vector<session::RunRecord> runs = source.runs();
    // readDiagnoses scans the baseline once per hypothesis, and the series below scan every
    // run again: each run is read from the file once.
    std::map<session::RunId, std::vector<session::StepSummary>> read;
    const analysis::StepSummaryScan scan = [&](session::RunId run,
                                               const std::function<void(const session::StepSummary&)>& visit) {
      auto it = read.find(run);
      if (it == read.end()) {
        std::vector<session::StepSummary> steps;
        source.forEachStepSummary(run, [&](const session::StepSummary& s) { steps.push_back(s); });
        it = read.emplace(run, std::move(steps)).first;
      }
      for (const session::StepSummary& s : it->second) visit(s);
    };
    // The baseline's own steps, whole, for what their arrays show (a DFlash2 selector's findings).
    const analysis::StepScan steps = [&](session::RunId run,
                                         const std::function<void(const session::StepRecord&)>& visit) {
      for (const session::PromptRecord& prompt : source.prompts(run))
        for (const session::StepRecord& step : source.steps(run, prompt.promptId)) visit(step);
    };
    diagnoses = analysis::readDiagnoses(runs, scan, steps);
    if (diagnoses.empty()) return;
    // The compare view lists the same series of the same runs, in this order.
    const std::vector<analysis::ComparedSeries> series = analysis::loadComparedSeries(runs, scan);
    for (std::size_t i = 0; i < series.size(); ++i)
      if (series[i].mode == session::EvaluationMode::TeacherForced) teacherForcedSeries[series[i].run] = static_cast<int>(i);
  }
};

DiagnosisView::Panel DiagnosisView::panelFor(const std::string& hypothesis) {
  if (hypothesis.starts_with("mask:")) return Panel::Mask;
  if (hypothesis.starts_with("tap-") || hypothesis.starts_with("taps-")) return Panel::Statistics;
  return Panel::Tokens;
}

std::optional<analysis::MaskVariant> DiagnosisView::maskVariantOf(const std::string& hypothesis) {
  if (!hypothesis.starts_with("mask:")) return std::nullopt;
  return parseEnum<session::MaskVariant>(std::string_view(hypothesis).substr(5));
}

DiagnosisView::DiagnosisView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      model_(new DiagnosisModel(this)),
      pages_(new QStackedWidget),
      hint_(new QLabel),
      selector_(new QComboBox),
      baseline_(new QLabel),
      summary_(new QLabel),
      lintTitle_(new QLabel),
      lintList_(new QTreeWidget),
      hypotheses_(new QTreeView),
      reloader_(new ReloadWhenShown(this, [this] { reload(); }, ReloadWhenShown::Pace::Throttle)) {
  pool_.setMaxThreadCount(1);

  hint_->setWordWrap(true);
  hint_->setTextFormat(Qt::RichText);
  hint_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  hint_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  hint_->setMargin(8);

  selector_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  selector_->setMinimumContentsLength(28);
  selector_->setToolTip(tr("One diagnosis per drafter: choose which to show"));
  connect(selector_, &QComboBox::currentIndexChanged, this, &DiagnosisView::showDiagnosis);
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::RichText);

  lintList_->setColumnCount(4);
  lintList_->headerItem()->setToolTip(
      0, tr("What lint found in the checkpoints and the settings before any compute: each finding names the file "
            "and field and says what to do"));
  lintList_->setRootIsDecorated(false);
  lintList_->setWordWrap(true);
  lintList_->setUniformRowHeights(false);
  lintList_->setSelectionMode(QAbstractItemView::NoSelection);
  lintList_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  lintList_->header()->setStretchLastSection(true);
  lintTitle_->setText(tr("<b>Lint</b>: the checkpoints raised no finding before the compute."));

  hypotheses_->setModel(model_);
  hypotheses_->setItemDelegateForColumn(
      DiagnosisModel::BarColumn,
      new IntervalBarDelegate({DiagnosisModel::EstimateRole, DiagnosisModel::LowRole, DiagnosisModel::HighRole,
                               DiagnosisModel::AxisLowRole, DiagnosisModel::AxisHighRole, DiagnosisModel::VerdictRole},
                              hypotheses_));
  hypotheses_->setSelectionBehavior(QAbstractItemView::SelectRows);
  hypotheses_->setUniformRowHeights(true);
  hypotheses_->setAllColumnsShowFocus(true);
  hypotheses_->setExpandsOnDoubleClick(false);
  QHeaderView* header = hypotheses_->header();
  header->setStretchLastSection(true);
  header->setSectionResizeMode(QHeaderView::Interactive);
  // The blocks' labels are longer than the hypotheses' names: the column follows what is open.
  for (auto signal : {&QTreeView::expanded, &QTreeView::collapsed})
    connect(hypotheses_, signal, this, [this] { hypotheses_->resizeColumnToContents(DiagnosisModel::NameColumn); });
  connect(hypotheses_, &QTreeView::clicked, this, &DiagnosisView::activate);
  connect(hypotheses_, &QTreeView::activated, this, &DiagnosisView::activate);  // the keyboard's Enter

  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Diagnosis of")));
  top->addWidget(selector_);
  top->addWidget(baseline_, 1);
  auto* lintBox = new QWidget;
  auto* lintLayout = new QVBoxLayout(lintBox);
  lintLayout->setContentsMargins(0, 0, 0, 0);
  lintLayout->addWidget(lintTitle_);
  lintLayout->addWidget(lintList_, 1);
  auto* hypothesisBox = new QWidget;
  auto* hypothesisLayout = new QVBoxLayout(hypothesisBox);
  hypothesisLayout->setContentsMargins(0, 0, 0, 0);
  auto* hypothesisTitle = new QLabel(
      tr("<b>Hypotheses</b> by \u0394\u03c4 against the baseline (<span style='color:%1'>green</span>: a candidate "
         "cause). Click one to compare; expand it for its blocks.")
          .arg(IntervalBarDelegate::above().name()));
  hypothesisTitle->setToolTip(
      tr("Each hypothesis is the evaluation under one variant (mask, taps, positions, block size, prompt format, the "
         "target's numerics) at the baseline's anchors. \u0394\u03c4 is the paired difference of its tau (z-lab) "
         "against the baseline's over the same prompts, with a 95% bootstrap interval. When the whole interval lies "
         "above zero the drafter does better under the variant beyond noise: it was probably trained that way."));
  hypothesisTitle->setWordWrap(true);
  hypothesisLayout->addWidget(hypothesisTitle);
  hypothesisLayout->addWidget(hypotheses_, 1);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(lintBox);
  splitter->addWidget(hypothesisBox);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 3);
  splitter->setChildrenCollapsible(false);
  auto* content = new QWidget;
  auto* contentLayout = new QVBoxLayout(content);
  contentLayout->setContentsMargins(0, 0, 0, 0);
  contentLayout->addLayout(top);
  contentLayout->addWidget(summary_);
  contentLayout->addWidget(splitter, 1);
  pages_->addWidget(hint_);
  pages_->addWidget(content);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(pages_);

  addExportMenu(hypotheses_, QStringLiteral("diagnosis"), [this] { return exportData(); });
  if (context_) context_->addViewer(this);
  showDiagnosis(-1);
}

DiagnosisView::~DiagnosisView() {
  if (context_) context_->removeViewer(this);
  ++generation_;
  pool_.waitForDone();  // a worker posts to this object; it must not outlive it
}

const std::vector<analysis::Diagnosis>& DiagnosisView::diagnoses() const {
  static const std::vector<analysis::Diagnosis> none;
  return result_ ? result_->diagnoses : none;
}

int DiagnosisView::seriesOf(session::RunId run) const {
  if (!result_) return -1;
  const auto it = result_->teacherForcedSeries.find(run);
  return it == result_->teacherForcedSeries.end() ? -1 : it->second;
}

QString DiagnosisView::hint() const { return pages_->currentWidget() == hint_ ? hint_->text() : QString(); }

QString DiagnosisView::summary() const { return baseline_->text() + QLatin1Char('\n') + summary_->text(); }

void DiagnosisView::onSessionOpened() { reloader_->request(); }

void DiagnosisView::onSessionClosed() {
  reloader_->clear();
  ++generation_;
  computing_ = false;
  result_.reset();
  showDiagnosis(-1);
}

// At most one reload per interval while steps keep arriving (the reloader is throttled:
// restarting its timer on every append would hold a steadily written diagnosis back until the
// engine pauses).
void DiagnosisView::onStepsAppended(const std::vector<session::StepRecord>&) { reloader_->requestSoon(); }

bool DiagnosisView::isStale() const { return reloader_->isStale(); }

void DiagnosisView::reload() {
  reloader_->clear();
  std::unique_ptr<SessionSource> source = context_ && context_->isOpen() ? context_->openSecondSource() : nullptr;
  if (!source) {  // no session, or it could not be opened again (reported)
    result_.reset();
    showDiagnosis(-1);
    emit computed();
    return;
  }
  const quint64 generation = ++generation_;
  computing_ = true;
  if (!result_) hint_->setText(tr("Reading the session's diagnoses..."));
  auto shared = std::shared_ptr<SessionSource>(std::move(source));
  computeOnWorker(pool_, this, &DiagnosisView::finish, generation, std::make_shared<Result>(),
                  [shared](Result& result) { result.compute(*shared); });
}

void DiagnosisView::finish(quint64 generation, const std::shared_ptr<Result>& result) {
  if (generation != generation_) return;
  computing_ = false;
  if (!result->error.isEmpty() && context_) context_->reportError(tr("Cannot read the diagnosis"), result->error);
  // A followed diagnosis keeps the drafter on screen as its hypotheses arrive.
  const int previous = selector_->currentIndex();
  result_ = result;
  {
    const QSignalBlocker block(selector_);
    selector_->clear();
    for (const analysis::Diagnosis& d : result_->diagnoses)
      selector_->addItem(tr("%1 (baseline: run %2)").arg(QString::fromStdString(d.drafter)).arg(d.baseline));
    selector_->setCurrentIndex(result_->diagnoses.empty() ? -1 : std::clamp(previous, 0, selector_->count() - 1));
  }
  selector_->setEnabled(selector_->count() > 1);
  showDiagnosis(selector_->currentIndex());
  emit computed();
}

void DiagnosisView::showDiagnosis(int index) {
  if (!result_ || index < 0 || index >= static_cast<int>(result_->diagnoses.size())) {
    model_->setDiagnosis({});
    lintList_->clear();
    QString text;
    if (!context_ || !context_->isOpen()) {
      text = tr("<h3>No session open</h3>");
    } else if (computing_ || isStale()) {
      text = tr("<p>Reading the session's diagnoses...</p>");
    } else if (result_ && !result_->error.isEmpty()) {
      text = tr("<p>Cannot read the diagnosis: %1</p>").arg(result_->error.toHtmlEscaped());
    } else {
      text = tr("<h3>This session holds no diagnosis</h3>");
    }
    hint_->setText(text + tr(
        "<p>A diagnosis tests, in one command, the usual reasons for a low acceptance (mask, hidden-state taps, "
        "positions, block size, prompt formatting, numerics of the target) and ranks them by how much each "
        "would raise tau. Start one with File &gt; Diagnose, or run</p>"
        "<pre>  dflash-eval diagnose --target DIR --drafter DIR --prompts FILE -o diag.dfi</pre>"
        "<p>(add <code>--training-dump F.safetensors</code> to check the taps against training, "
        "<code>--budget-minutes M</code> to bound it), then open <code>diag.dfi</code> here.</p>"));
    pages_->setCurrentWidget(hint_);
    return;
  }
  const analysis::Diagnosis& d = result_->diagnoses[static_cast<std::size_t>(index)];
  model_->setDiagnosis(d);

  int candidates = 0, measured = 0, notApplicable = 0, notMeasured = 0;
  for (const analysis::HypothesisResult& h : d.hypotheses) {
    candidates += h.candidateCause();
    measured += h.measured();
    notApplicable += !h.planned.applicable;
    notMeasured += h.planned.applicable && !h.measured();
  }
  // A measured tau is a mean acceptance length, at least 1: 0 is a baseline with no finished prompt.
  baseline_->setText(d.baselineTau.estimate >= 1
                         ? tr("baseline <b>\u03c4 (z-lab) %1</b>, 95% interval [%2, %3]")
                               .arg(fixed(d.baselineTau.estimate), fixed(d.baselineTau.low), fixed(d.baselineTau.high))
                         : tr("baseline not measured yet: no prompt of it finished"));
  baseline_->setToolTip(tr("Run %1, teacher-forced at the live anchors with the reference mask: every hypothesis is "
                           "measured against it on the same prompts and anchors")
                            .arg(d.baseline));
  QString text;
  const bool tooFew = !d.hypotheses.empty() && d.hypotheses.front().measured() &&
                      !analysis::verdictPossible(d.hypotheses.front().pairedPrompts);
  if (tooFew) {
    text += tr("No verdict: only %1 prompts measured, and a verdict needs at least %2. ")
                .arg(d.hypotheses.front().pairedPrompts)
                .arg(analysis::kMinPromptsForVerdict);
  } else if (candidates == 0) {
    text += tr("No candidate cause: no variant beats the baseline beyond noise. ");
  } else {
    QStringList names;
    for (const analysis::HypothesisResult& h : d.hypotheses)
      if (h.candidateCause()) names << QStringLiteral("<b>%1</b>").arg(QString::fromStdString(h.planned.name).toHtmlEscaped());
    text += tr("<span style='color:%1'>Candidate cause%2:</span> %3. ")
                .arg(IntervalBarDelegate::above().name(), candidates > 1 ? QStringLiteral("s") : QString(),
                     names.join(QStringLiteral(", ")));
    // The top one in plain words: what it means and what to do, and the block that shows it.
    const analysis::HypothesisResult& top = d.hypotheses.front();
    if (const auto words = analysis::findingWords(top.planned))
      text += QStringLiteral("<br>%1 <b>%2</b> %3")
                  .arg(QString::fromStdString(words->meaning).toHtmlEscaped(), tr("What to do:"),
                       QString::fromStdString(words->action).toHtmlEscaped());
    if (const std::string block = analysis::strongestBlock(top); !block.empty())
      text += tr("<br>Clearest in %1 (click the hypothesis for its blocks).")
                  .arg(QString::fromStdString(block).toHtmlEscaped());
    text += QStringLiteral("<br>");
  }
  text += tr("%1 of %2 hypotheses measured").arg(measured).arg(d.hypotheses.size());
  if (notApplicable) text += tr(", %1 not applicable").arg(notApplicable);
  if (notMeasured) text += tr(", %1 not measured (cancelled, or still running)").arg(notMeasured);
  summary_->setText(text + QStringLiteral("."));

  lintList_->clear();
  for (const analysis::LintFinding& f : d.lint) {
    auto* item = new QTreeWidgetItem(lintList_);
    item->setIcon(0, severityIcon(this, f.severity));
    item->setText(0, QString::fromUtf8(analysis::lintSeverityName(f.severity).data()));
    item->setForeground(0, severityColour(f.severity));
    item->setText(1, QString::fromStdString(f.code));
    item->setText(2, QString::fromStdString(f.subject));
    item->setText(3, QString::fromStdString(f.message));
    item->setToolTip(3, QString::fromStdString(f.message));
  }
  // The list's header names it; a sentence only says that there is nothing to list.
  lintList_->setHeaderLabels({tr("Lint (%1)").arg(d.lint.size()), tr("Finding"), tr("Where"), tr("What to do")});
  lintTitle_->setVisible(d.lint.empty());
  lintList_->setVisible(!d.lint.empty());
  // No taller than its rows: the height left goes to the hypotheses.
  int rows = lintList_->header()->sizeHint().height() + 2 * lintList_->frameWidth();
  for (int i = 0; i < lintList_->topLevelItemCount(); ++i)
    rows += lintList_->sizeHintForRow(i) > 0 ? lintList_->sizeHintForRow(i) : fontMetrics().height() + 4;
  lintList_->setMaximumHeight(rows + 2);
  lintList_->setMinimumHeight(std::min(rows + 2, 6 * (fontMetrics().height() + 4)));
  for (int c = 0; c < DiagnosisModel::ChangeColumn; ++c)
    if (c != DiagnosisModel::BarColumn) hypotheses_->resizeColumnToContents(c);
  fitBarColumn();
  pages_->setCurrentWidget(pages_->widget(1));
}

// The bars take a fifth of the panel's width, at least what their header (it names the axis)
// needs, and no more than a wide screen makes useful.
void DiagnosisView::fitBarColumn() {
  const int chars = fontMetrics().averageCharWidth();
  const int width = std::clamp(this->width() / 5, 22 * chars, 60 * chars);  // the list may be on a hidden page
  hypotheses_->header()->resizeSection(DiagnosisModel::BarColumn,
                                       std::max(width, hypotheses_->header()->sectionSizeHint(DiagnosisModel::BarColumn)));
}

void DiagnosisView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitBarColumn();
}

void DiagnosisView::activate(const QModelIndex& index) {
  if (!index.isValid() || !result_) return;
  const analysis::HypothesisResult& h = model_->hypothesis(index);
  if (!model_->isBlock(index)) {
    if (h.measured()) openComparison(h);
    return;
  }
  const analysis::BlockRegression& b = model_->block(index);
  if (context_) context_->select({h.run, b.prompt, b.stepB});
  const std::optional<analysis::MaskVariant> variant = maskVariantOf(h.planned.name);
  emit blockChosen(panelFor(h.planned.name),
                   variant && *variant != analysis::MaskVariant::Reference ? std::optional(analysis::MaskVariant::Reference)
                                                                            : std::nullopt);
}

// The better of baseline and hypothesis is A (the overview's convention): the compare view
// then lists the blocks where the other fell behind, which are the gains of a hypothesis that
// helps and the losses of one that hurts; the one that changed most is chosen there.
void DiagnosisView::openComparison(const analysis::HypothesisResult& h) {
  const analysis::Diagnosis& d = model_->diagnosis();
  const int baseline = seriesOf(d.baseline), hypothesis = seriesOf(h.run);
  if (baseline < 0 || hypothesis < 0) return;
  const bool helps = h.deltaTau.estimate > 0;
  emit comparisonChosen(helps ? hypothesis : baseline, helps ? baseline : hypothesis);
  if (!compareView_) return;
  compareView_->requestRuns(helps ? h.run : d.baseline, helps ? d.baseline : h.run);
  const std::vector<analysis::BlockRegression>& blocks = helps ? h.gains : h.losses;
  if (blocks.empty()) return;
  // The diagnosis's blocks have A = baseline; the comparison's, A = the better run.
  const analysis::BlockRegression& top = blocks.front();
  if (helps) {
    selectInCompareView(top.stepB, top.stepA);
  } else {
    selectInCompareView(top.stepA, top.stepB);
  }
}

// The compare view computes the pair on its worker: the block is chosen in its list once
// there (step ids belong to one run each, so a list holding both is the pair asked for).
void DiagnosisView::selectInCompareView(session::StepId stepA, session::StepId stepB) {
  disconnect(pendingBlock_);
  const auto trySelect = [this, stepA, stepB] {
    BlockRegressionModel* blocks = compareView_->regressionModel();
    for (int row = 0; row < blocks->rowCount(); ++row)
      if (blocks->regression(row).stepA == stepA && blocks->regression(row).stepB == stepB) {
        disconnect(pendingBlock_);
        compareView_->regressionTable()->setCurrentIndex(blocks->index(row, 0));
        compareView_->regressionTable()->scrollTo(blocks->index(row, 0));
        return true;
      }
    return false;
  };
  if (!compareView_->isComputing() && !compareView_->isStale() && trySelect()) return;
  pendingBlock_ = connect(compareView_, &CompareView::computed, this, trySelect);
}

CsvTable DiagnosisView::exportData() {
  if (model_->diagnosis().baseline == 0) return {};
  CsvTable table{{tr("hypothesis"), tr("applicable"), tr("measured"), tr("delta_tau"), tr("delta_tau_low"),
                  tr("delta_tau_high"), tr("tau"), tr("paired_prompts"), tr("candidate_cause"), tr("run"),
                  tr("reason")},
                 {}};
  for (const analysis::HypothesisResult& h : model_->diagnosis().hypotheses) {
    const auto number = [&](double v) { return h.measured() ? QString::number(v, 'g', 6) : QString(); };
    table.rows.push_back({QString::fromStdString(h.planned.name), h.planned.applicable ? "true" : "false",
                          h.measured() ? "true" : "false", number(h.deltaTau.estimate), number(h.deltaTau.low),
                          number(h.deltaTau.high), number(h.tau.estimate),
                          h.measured() ? QString::number(h.pairedPrompts) : QString(),
                          h.candidateCause() ? "true" : "false", h.measured() ? QString::number(h.run) : QString(),
                          QString::fromStdString(h.planned.reason)});
  }
  return table;
}

}  // namespace dfi::ui
