#include "panels/overview_view.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QFileInfo>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "dfi/analysis/recorded_summary.h"
#include "dfi/analysis/summary_fields.h"
#include "dfi/base/field_json.h"
#include "dfi/analysis/statistics.h"
#include "dfi/base/error.h"
#include "session/reload_when_shown.h"
#include "session/session_context.h"
#include "session/session_source.h"
#include "session/worker_result.h"
#include "dfi/session/record_fields.h"

namespace dfi::ui {
namespace {

QString escaped(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

const QString kUnfinishedMark = QStringLiteral("\u2020");  // a dagger after the prompt count

// "1 prompt", "3 prompts" (tr's %n plurals need a translation loaded).
QString counted(std::size_t n, const QString& one, const QString& many) {
  return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QString fixed(double value) { return QString::number(value, 'f', 2); }

QString fileName(const std::string& path) {
  const QString name = QFileInfo(QString::fromStdString(path)).fileName();
  return name.isEmpty() ? QString::fromStdString(path) : name;
}

}  // namespace

// The one run summary (analysis/recorded_summary.h), as `dflash-eval summary` computes it from
// the same runs: the same rows, the same paired comparisons.
struct OverviewView::Result {
  std::vector<session::RunRecord> runs;  // the evaluation runs: a diagnosis's are left out
  std::vector<analysis::SummaryRow> rows;
  std::vector<analysis::TauComparison> comparisons;  // largest |difference| first
  std::map<std::string, std::set<session::PromptId>> promptSets;  // dataset -> prompts (over every run)
  std::size_t diagnosisRuns = 0;  // left to the Diagnosis panel
  std::set<session::RunId> unfinished;  // stopped (a cancel, a crash, a quit) or still recording
  QString error;

  void compute(SessionSource& source) {
    const std::vector<session::RunRecord> all = source.runs();
    for (const session::RunRecord& run : all) {
      if (!run.hypothesis.empty()) {
        ++diagnosisRuns;
        continue;
      }
      runs.push_back(run);
      if (run.finishedAt == 0) unfinished.insert(run.runId);
    }
    try {
      const std::vector<analysis::SummaryRun> summary = analysis::recordedSummaryRuns(
          {.runs = all,
           .prompts = [&](session::RunId run) { return source.prompts(run); },
           .forEachStepSummary = [&](session::RunId run, const auto& visit) { source.forEachStepSummary(run, visit); },
           .file = source.path()});
      rows = analysis::summarizeRuns(summary);
      // The prompt sets as the summary names them (a prompt's dataset, or its prompts file's).
      for (const analysis::SummaryRun& s : summary)
        if (std::ranges::any_of(runs, [&](const auto& run) { return std::ranges::count(s.runIds, run.runId) > 0; }))
          for (const analysis::SummaryResponse& response : s.responses) promptSets[response.dataset].insert(response.promptId);
      comparisons = analysis::pairedComparisons(summary);
    } catch (const Error& e) {
      error = QString::fromStdString(e.what());
    }
    std::ranges::stable_sort(comparisons, [](const auto& x, const auto& y) {
      return std::abs(x.difference.estimate) > std::abs(y.difference.estimate);
    });
  }
};

OverviewView::OverviewView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      browser_(new QTextBrowser),
      reloader_(new ReloadWhenShown(this, [this] { reload(); })) {
  pool_.setMaxThreadCount(1);
  browser_->setOpenLinks(false);
  browser_->setFrameShape(QFrame::NoFrame);
  connect(browser_, &QTextBrowser::anchorClicked, this, &OverviewView::follow);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(browser_);
  if (context_) {
    context_->addViewer(this);
    connect(context_, &SessionContext::tauConventionChanged, this, &OverviewView::render);
  }
  render();
}

OverviewView::~OverviewView() {
  if (context_) context_->removeViewer(this);
  ++generation_;
  pool_.waitForDone();  // a worker posts to this object; it must not outlive it
}

QString OverviewView::runLink(session::RunId run) { return QStringLiteral("run:%1").arg(run); }

QString OverviewView::pairLink(session::RunId a, session::RunId b) { return QStringLiteral("pair:%1,%2").arg(a).arg(b); }

QString OverviewView::text() const { return browser_->toPlainText(); }

QWidget* OverviewView::exportTarget() { return browser_; }

void OverviewView::onSessionOpened() { reload(); }

void OverviewView::onSessionClosed() {
  reloader_->clear();
  ++generation_;
  computing_ = false;
  result_.reset();
  render();
}

// A followed file: the figures are re-read once it has been quiet for a while, and only when
// the panel is on screen (the compare view does the same).
void OverviewView::onStepsAppended(const std::vector<session::StepRecord>&) { reloader_->requestSoon(); }

void OverviewView::reload() {
  reloader_->clear();
  std::unique_ptr<SessionSource> source = context_ && context_->isOpen() ? context_->openSecondSource() : nullptr;
  if (!source) return;
  const quint64 generation = ++generation_;
  computing_ = true;
  render();
  auto shared = std::shared_ptr<SessionSource>(std::move(source));
  computeOnWorker(pool_, this, &OverviewView::finish, generation, std::make_shared<Result>(),
                  [shared](Result& result) { result.compute(*shared); });
}

void OverviewView::finish(quint64 generation, const std::shared_ptr<Result>& result) {
  if (generation != generation_) return;
  computing_ = false;
  if (!result->error.isEmpty() && context_) context_->reportError(tr("Cannot summarise the session"), result->error);
  result_ = result;
  render();
  emit computed();
}

void OverviewView::render() {
  const TauConvention convention = context_ ? context_->tauConvention() : TauConvention::Reference;
  const bool zlab = convention == TauConvention::Reference;
  QString html;
  if (!context_ || !context_->isOpen()) {
    html = tr("<h3>No session open</h3><p>Open a session (File &gt; Open Session, a recent file, or drop a .dfi file "
              "on the window) to see its runs, their acceptance, its prompt sets and the largest differences "
              "between runs here.</p><p>Without a session the <b>Attention mask</b> panel explains the DFlash "
              "masks: choose a layout and a variant there.</p>");
    browser_->setHtml(html);
    return;
  }
  html += tr("<h3>%1</h3>").arg(QFileInfo(context_->path()).fileName().toHtmlEscaped());
  if (!result_) {
    browser_->setHtml(html + tr("<p>Reading the runs...</p>"));
    return;
  }
  const Result& r = *result_;
  if (!r.error.isEmpty()) {
    browser_->setHtml(html + tr("<p>Cannot summarise the session: %1</p>").arg(r.error.toHtmlEscaped()));
    return;
  }
  std::set<std::string> targets, drafters;
  for (const session::RunRecord& run : r.runs) {
    targets.insert(run.target.path);
    drafters.insert(run.drafter.path);
  }
  std::size_t prompts = 0;
  for (const auto& [set, ids] : r.promptSets) prompts += ids.size();
  QStringList targetNames;
  for (const std::string& t : targets) targetNames << fileName(t).toHtmlEscaped();
  if (r.runs.empty())
    html += tr("<p>No evaluation runs.</p>");
  else
    html += tr("<p>%1 of %2 on %3, %4.</p>")
                .arg(counted(r.runs.size(), tr("run"), tr("runs")), counted(drafters.size(), tr("drafter"), tr("drafters")),
                     targetNames.join(QStringLiteral(", ")), counted(prompts, tr("prompt"), tr("prompts")));
  if (r.diagnosisRuns > 0)
    html += tr("<p>%1 of diagnoses are in the <b>Diagnosis</b> panel.</p>")
                .arg(counted(r.diagnosisRuns, tr("run"), tr("runs")));
  html += tr("<p><i>Click a run to select it in the navigator, then a step to see its tokens, mask, attention and "
             "statistics. Click a difference to compare the two runs block by block.</i></p>");

  // The summary's rows, with the tau on screen: the rows `dflash-eval summary` prints.
  html += tr("<h4>Runs: %1, 95% interval over prompts</h4>").arg(tauHeader(convention).toHtmlEscaped());
  html += QStringLiteral("<table cellspacing=0 cellpadding=3><tr><th align=left>%1</th><th align=left>%2</th>"
                         "<th align=left>%3</th><th align=left>%4</th><th align=right>%5</th><th align=right>%6</th>"
                         "<th align=right>%7</th><th align=right>%8</th></tr>")
              .arg(tr("drafter"), tr("mode"), tr("mask"), tr("prompt set"), tauHeader(convention).toHtmlEscaped(),
                   tr("95% interval"), tr("prompts"), tr("steps"));
  for (const analysis::SummaryRow& row : r.rows) {
    const analysis::Interval& ci = zlab ? row.tau : row.tauVllm;
    const bool measured = row.responses > 0;
    const bool stopped = std::ranges::any_of(row.runIds, [&](std::int64_t run) { return r.unfinished.contains(run); });
    const QString name = escaped(row.drafter);
    html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td align=right><b>%5</b></td>"
                           "<td align=right>%6</td><td align=right>%7</td><td align=right>%8</td></tr>")
                .arg(row.runIds.empty() ? name : QStringLiteral("<a href=\"%1\">%2</a>").arg(runLink(row.runIds.front()), name),
                     escaped(row.sampling == "greedy" ? row.mode : row.mode + " " + row.sampling), escaped(row.variant),
                     escaped(row.dataset), measured ? fixed(ci.estimate) : QStringLiteral("-"),
                     measured ? QStringLiteral("[%1, %2]").arg(fixed(ci.low), fixed(ci.high)) : QString(),
                     QString::number(row.responses) + (stopped ? kUnfinishedMark : QString()), QString::number(row.steps));
  }
  html += QStringLiteral("</table>");
  if (!r.unfinished.empty())
    html += tr("<p>%1 Not finished: the run was stopped (cancelled, quit, or the engine ended) or is still "
               "recording, so it has fewer prompts than its evaluation planned; paired figures use only the "
               "prompts both runs have.</p>")
                .arg(kUnfinishedMark);

  // Prompt sets.
  html += tr("<h4>Prompt sets</h4><ul>");
  for (const auto& [set, ids] : r.promptSets)
    html += QStringLiteral("<li>%1: %2</li>").arg(escaped(set), counted(ids.size(), tr("prompt"), tr("prompts")));
  html += QStringLiteral("</ul>");

  // The summary's paired comparisons (drafter against the first drafter, mask variant against
  // the reference), largest first; A is the better of each pair, so the compare view lists the
  // blocks where the worse one fell behind. Paired over the prompts both have, in the z-lab
  // convention whatever is on screen (a per-prompt tau is what pairs).
  html += tr("<h4>Largest differences, paired over the same prompts (τ z-lab)</h4>");
  if (r.comparisons.empty()) html += tr("<p>The session has no two drafters or mask variants to compare.</p>");
  html += QStringLiteral("<table cellspacing=0 cellpadding=3>");
  for (std::size_t i = 0; i < r.comparisons.size() && i < static_cast<std::size_t>(kDifferencesShown); ++i) {
    const analysis::TauComparison& c = r.comparisons[i];
    const bool comparedIsBetter = c.difference.estimate > 0;
    const QString compared = escaped(c.acrossVariants() ? c.drafter + ": " + c.variant : c.drafter);
    const QString baseline = escaped(c.acrossVariants() ? c.baselineVariant : c.baselineDrafter);
    const analysis::Interval gain = comparedIsBetter ? c.difference
                                                     : analysis::Interval{-c.difference.estimate, -c.difference.high,
                                                                          -c.difference.low};
    QString interval = tr("[%1, %2] paired over %3")
                           .arg(fixed(gain.low), fixed(gain.high), counted(static_cast<std::size_t>(c.prompts), tr("prompt"), tr("prompts")));
    if (!analysis::verdictPossible(c.prompts))
      interval += tr(" (too few for a verdict: %1 needed)").arg(analysis::kMinPromptsForVerdict);
    const QString pair = QStringLiteral("%1 vs %2").arg(comparedIsBetter ? compared : baseline, comparedIsBetter ? baseline : compared);
    const QString label = c.run && c.baselineRun
                              ? QStringLiteral("<a href=\"%1\">%2</a>")
                                    .arg(comparedIsBetter ? pairLink(c.run, c.baselineRun) : pairLink(c.baselineRun, c.run), pair)
                              : pair;
    html += QStringLiteral("<tr><td>%1</td><td>%2</td><td align=right><b>+%3</b></td><td>%4</td></tr>")
                .arg(label, escaped(c.acrossVariants() ? c.mode : c.mode + ", " + c.variant), fixed(gain.estimate), interval);
  }
  html += QStringLiteral("</table>");
  browser_->setHtml(html);
}

void OverviewView::follow(const QUrl& link) {
  const QString text = link.toString();
  if (text.startsWith(QLatin1String("run:"))) {
    const auto run = static_cast<session::RunId>(text.mid(4).toLongLong());
    if (context_) context_->select({run, -1, 0});
    emit runChosen(run);
  } else if (text.startsWith(QLatin1String("pair:"))) {
    const QStringList ab = text.mid(5).split(QLatin1Char(','));
    if (ab.size() == 2) emit pairChosen(ab[0].toLongLong(), ab[1].toLongLong());
  }
}

// The summary's rows as `dflash-eval summary --json` writes them: one column per key of its field
// table (summary_fields.h), a list (an interval's bounds, run ids) as its values separated by a
// space, a key the row leaves out (no tau without a response) as an empty cell.
CsvTable OverviewView::exportData() {
  if (!result_) return {};
  CsvTable table;
  forEachField<analysis::SummaryRow>(
      [&](const auto& f) { table.header << QString::fromUtf8(f.name.data(), static_cast<qsizetype>(f.name.size())); });
  const auto cell = [](const nlohmann::json& value) -> QString {
    if (value.is_string()) return QString::fromStdString(value.get<std::string>());
    if (value.is_number_float()) return QString::number(value.get<double>(), 'g', 17);
    if (value.is_number()) return QString::number(value.get<std::int64_t>());
    return {};
  };
  for (const analysis::SummaryRow& row : result_->rows) {
    const nlohmann::json json = toJson(row);
    QStringList cells;
    for (const QString& key : table.header) {
      const auto it = json.find(key.toStdString());
      if (it == json.end()) {
        cells << QString();
      } else if (it->is_array()) {
        QStringList items;
        for (const nlohmann::json& item : *it) items << cell(item);
        cells << items.join(QLatin1Char(' '));
      } else {
        cells << cell(*it);
      }
    }
    table.rows.push_back(cells);
  }
  return table;
}

}  // namespace dfi::ui
