#include "panels/overview_view.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QFileInfo>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "session/reload_when_shown.h"
#include "session/session_context.h"
#include "session/session_source.h"
#include "session/worker_result.h"
#include "dfi/session/record_fields.h"

namespace dfi::ui {
namespace {

// A difference between two series of the same step mode; a and b in series order (a < b).
struct PairDelta {
  int a = 0, b = 0;
  double zlab = 0, vllm = 0;                 // tau of b minus tau of a
  // z-lab, paired over the prompts both answered: the estimate and its interval over the same
  // prompts (runs of different prompt counts differ from zlab there), and how many.
  std::optional<analysis::Interval> paired;
  std::size_t pairedPrompts = 0;
};

QString escaped(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

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

struct OverviewView::Result {
  std::vector<session::RunRecord> runs;
  std::vector<analysis::ComparedSeries> series;
  std::vector<analysis::SeriesStatistics> stats;
  std::vector<analysis::Interval> vllmIntervals;  // by series
  std::map<std::string, std::set<session::PromptId>> promptSets;  // dataset -> prompts (over every run)
  std::vector<PairDelta> pairs;
  std::size_t diagnosisRuns = 0;  // left to the Diagnosis panel
  QString error;

  void compute(SessionSource& source) {
    // A diagnosis's runs (baseline and hypotheses) are variants of one drafter read by their
    // diagnosis, as `summary` reads them: never listed or compared with the drafters' own runs.
    for (session::RunRecord& run : source.runs()) {
      if (run.hypothesis.empty()) runs.push_back(std::move(run));
      else ++diagnosisRuns;
    }
    for (const session::RunRecord& run : runs)
      for (const session::PromptRecord& p : source.prompts(run.runId))
        promptSets[p.dataset.empty() ? std::string("(no set named)") : p.dataset].insert(p.promptId);
    series = analysis::loadComparedSeries(
        runs, [&](session::RunId run, const auto& visit) { source.forEachStepSummary(run, visit); });
    stats = analysis::summarizeSeries(series);
    for (const analysis::ComparedSeries& s : series) vllmIntervals.push_back(analysis::tauVllmInterval(s));
    // Live, teacher-forced and DDTree steps measure different things: only like with like.
    for (int a = 0; a < static_cast<int>(series.size()); ++a)
      for (int b = a + 1; b < static_cast<int>(series.size()); ++b)
        if (series[static_cast<std::size_t>(a)].mode == series[static_cast<std::size_t>(b)].mode &&
            stats[static_cast<std::size_t>(a)].steps > 0 && stats[static_cast<std::size_t>(b)].steps > 0)
          pairs.push_back({a, b, stats[static_cast<std::size_t>(b)].tau.estimate - stats[static_cast<std::size_t>(a)].tau.estimate,
                           stats[static_cast<std::size_t>(b)].tauVllm - stats[static_cast<std::size_t>(a)].tauVllm, {}});
    // The paired interval of the largest z-lab differences (the bootstrap is the costly part).
    std::ranges::sort(pairs, [](const PairDelta& x, const PairDelta& y) { return std::abs(x.zlab) > std::abs(y.zlab); });
    for (std::size_t i = 0; i < pairs.size() && i < static_cast<std::size_t>(kDifferencesShown); ++i) {
      const auto a = static_cast<std::size_t>(pairs[i].a), b = static_cast<std::size_t>(pairs[i].b);
      const analysis::PairComparison pair = analysis::comparePair(series[a], stats[a], series[b], stats[b]);
      if (!pair.prompts.empty()) {
        pairs[i].paired = pair.difference;
        pairs[i].pairedPrompts = pair.prompts.size();
      }
    }
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

QString OverviewView::pairLink(int a, int b) { return QStringLiteral("pair:%1,%2").arg(a).arg(b); }

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

  // Runs, with the tau on screen.
  html += tr("<h4>Runs: %1, 95% interval over prompts</h4>").arg(tauHeader(convention).toHtmlEscaped());
  html += QStringLiteral("<table cellspacing=0 cellpadding=3><tr><th align=left>%1</th><th align=left>%2</th>"
                         "<th align=right>%3</th><th align=right>%4</th><th align=left>%5</th>"
                         "<th align=right>%6</th></tr>")
              .arg(tr("run"), tr("mode"), tauHeader(convention).toHtmlEscaped(), tr("95% interval"), tr("drafter"),
                   tr("prompts"));
  for (std::size_t i = 0; i < r.series.size(); ++i) {
    const analysis::ComparedSeries& s = r.series[i];
    const analysis::SeriesStatistics& st = r.stats[i];
    const analysis::Interval& ci = zlab ? st.tau : r.vllmIntervals[i];
    const QString interval = QStringLiteral("[%1, %2]").arg(fixed(ci.low), fixed(ci.high));
    html += QStringLiteral("<tr><td><a href=\"%1\">%2</a></td><td>%3</td><td align=right><b>%4</b></td>"
                           "<td align=right>%5</td><td>%6</td><td align=right>%7</td></tr>")
                .arg(runLink(s.run), escaped(s.label), QString::fromUtf8(enumName(s.mode).data()),
                     fixed(zlab ? st.tau.estimate : st.tauVllm), interval, fileName(s.drafter).toHtmlEscaped())
                .arg(st.prompts.size());
  }
  html += QStringLiteral("</table>");

  // Prompt sets.
  html += tr("<h4>Prompt sets</h4><ul>");
  for (const auto& [set, ids] : r.promptSets)
    html += QStringLiteral("<li>%1: %2</li>").arg(escaped(set), counted(ids.size(), tr("prompt"), tr("prompts")));
  html += QStringLiteral("</ul>");

  // The largest differences, in the convention on screen; A is the better run of each pair, so
  // the compare view lists the blocks where the worse one fell behind.
  std::vector<PairDelta> pairs = r.pairs;
  const auto delta = [zlab](const PairDelta& p) { return zlab ? p.zlab : p.vllm; };
  std::ranges::stable_sort(pairs, [&](const PairDelta& x, const PairDelta& y) { return std::abs(delta(x)) > std::abs(delta(y)); });
  html += tr("<h4>Largest differences between runs (same step mode)</h4>");
  if (pairs.empty()) html += tr("<p>The session has no two runs of the same step mode to compare.</p>");
  html += QStringLiteral("<table cellspacing=0 cellpadding=3>");
  for (std::size_t i = 0; i < pairs.size() && i < static_cast<std::size_t>(kDifferencesShown); ++i) {
    const PairDelta& p = pairs[i];
    const bool swap = delta(p) > 0;  // B beat A: show B as the baseline
    const int a = swap ? p.b : p.a, b = swap ? p.a : p.b;
    const double tauA = zlab ? r.stats[static_cast<std::size_t>(a)].tau.estimate : r.stats[static_cast<std::size_t>(a)].tauVllm;
    const double tauB = zlab ? r.stats[static_cast<std::size_t>(b)].tau.estimate : r.stats[static_cast<std::size_t>(b)].tauVllm;
    // The z-lab difference is the paired one where it was computed: estimate and interval over
    // the same prompts, so the interval always holds its estimate, whatever the runs' counts.
    double difference = tauB - tauA;
    QString interval;
    if (zlab && p.paired) {
      const analysis::Interval d = swap ? analysis::Interval{-p.paired->estimate, -p.paired->high, -p.paired->low} : *p.paired;
      difference = d.estimate;
      interval = tr("[%1, %2] paired over %3").arg(fixed(d.low), fixed(d.high), counted(p.pairedPrompts, tr("prompt"), tr("prompts")));
    }
    html += QStringLiteral("<tr><td><a href=\"%1\">%2 vs %3</a></td><td align=right>%4 \u2192 %5</td>"
                           "<td align=right><b>%6</b></td><td>%7</td></tr>")
                .arg(pairLink(a, b), escaped(r.series[static_cast<std::size_t>(a)].label),
                     escaped(r.series[static_cast<std::size_t>(b)].label), fixed(tauA), fixed(tauB),
                     QString::number(difference, 'f', 2), interval);
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
    if (ab.size() == 2) emit pairChosen(ab[0].toInt(), ab[1].toInt());
  }
}

CsvTable OverviewView::exportData() {
  if (!result_) return {};
  CsvTable table{{tr("run"), tr("mode"), tr("prompts"), tr("tau_zlab"), tr("tau_zlab_low"), tr("tau_zlab_high"),
                  tr("tau_vllm"), tr("tau_vllm_low"), tr("tau_vllm_high")},
                 {}};
  for (std::size_t i = 0; i < result_->series.size(); ++i) {
    const analysis::SeriesStatistics& st = result_->stats[i];
    table.rows.push_back({QString::fromStdString(result_->series[i].label),
                          QString::fromUtf8(enumName(result_->series[i].mode).data()), QString::number(st.prompts.size()),
                          QString::number(st.tau.estimate, 'g', 6), QString::number(st.tau.low, 'g', 6),
                          QString::number(st.tau.high, 'g', 6), QString::number(st.tauVllm, 'g', 6),
                          QString::number(result_->vllmIntervals[i].low, 'g', 6),
                          QString::number(result_->vllmIntervals[i].high, 'g', 6)});
  }
  return table;
}

}  // namespace dfi::ui
