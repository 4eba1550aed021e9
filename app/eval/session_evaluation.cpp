#include "session_evaluation.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <string>

#include "dfi/base/error.h"
#include "dfi/session/writer.h"
#include "summary_table.h"

namespace dfi::eval {
namespace {

engine::CancellationToken* activeCancel = nullptr;

// Ctrl-C asks the evaluation to stop after the current prompt, so the session stays whole.
void onInterrupt(int) {
  if (activeCancel) activeCancel->cancel();
}

std::vector<SummaryRun> summaryRuns(const engine::EvaluationSettings& settings,
                                    const std::vector<engine::RunSummary>& runs) {
  std::vector<std::string> drafters;
  for (const auto& d : settings.drafters) drafters.push_back(d.string());
  const std::vector<std::string> labels = drafterLabels(drafters);
  std::vector<SummaryRun> out;
  for (const auto& r : runs) {
    std::string mode(engine::evaluationModeName(r.mode));
    if (r.mode == engine::EvaluationMode::DDTree) mode += "-" + std::to_string(settings.ddtreeBudget);
    const auto which = std::ranges::find(drafters, r.drafter) - drafters.begin();
    SummaryRun run{labels.at(static_cast<std::size_t>(which)), mode, std::string(analysis::maskVariantName(r.variant)),
                   {}};
    // A file without "dataset" fields is one prompt set, named after the file.
    for (const auto& response : r.responses)
      run.responses.push_back(
          {response.dataset.empty() ? settings.prompts.stem().string() : response.dataset, response.acceptance});
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace

int evaluateIntoSession(const engine::EvaluationSettings& settings, const std::string& sessionPath,
                        bool overwrite, const SessionReport& report) {
  session::Writer writer(sessionPath,
                         {.mode = overwrite ? session::OpenMode::Overwrite : session::OpenMode::CreateNew});
  engine::SessionSink sink(writer);
  engine::CancellationToken cancel;
  activeCancel = &cancel;
  std::signal(SIGINT, onInterrupt);
  ProgressReporter progress(report.progress, report.context);
  try {
    const auto runs =
        engine::runEvaluation(settings, sink, [&](const engine::EvaluationProgress& p) { progress.report(p); }, cancel);
    progress.finish();
    writer.close();
    activeCancel = nullptr;
    const auto rows = summarize(summaryRuns(settings, runs));
    const std::string table = formatSummaryTable(rows);
    if (progress.style() == ProgressStyle::Json) {
      std::fputs(table.c_str(), stderr);
      progress.event("summary", {{"session", sessionPath}, {"rows", summaryJson(rows)}});
    } else {
      std::fputs(table.c_str(), stdout);
      std::printf("session: %s\n", sessionPath.c_str());
    }
    return 0;
  } catch (const Error& e) {
    progress.finish();
    activeCancel = nullptr;
    writer.close();  // keeps every step recorded so far, in a single valid file
    progress.event(dynamic_cast<const CancelledError*>(&e) ? "cancelled" : "error",
                   {{"session", sessionPath}, {"message", e.what()}, {"exit_code", e.exitCode()}});
    throw;
  }
}

}  // namespace dfi::eval
