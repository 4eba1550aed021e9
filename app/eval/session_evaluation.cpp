#include "session_evaluation.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cancel_on_interrupt.h"
#include "dfi/base/error.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/session/reader.h"
#include "dfi/session/record_fields.h"
#include "dfi/session/writer.h"
#include "dfi/analysis/recorded_summary.h"
#include "dfi/analysis/summary_table.h"

namespace dfi::eval {
namespace {

// The table for people (stdout, or stderr when stdout carries JSON) and the JSON summary event.
void printSummary(const std::vector<analysis::SummaryRun>& runs, ProgressReporter& progress, const std::string& sessionPath,
                  bool partial) {
  const auto rows = analysis::summarizeRuns(runs);
  const auto comparisons = analysis::pairedComparisons(runs);
  const std::string table = (partial ? "cancelled: the summary covers the prompts finished so far\n" : std::string()) +
                            analysis::formatSummaryTable(rows) + analysis::formatComparisons(comparisons);
  if (progress.style() == ProgressStyle::Json) {
    std::fputs(table.c_str(), stderr);
    progress.event("summary", {{"session", sessionPath},
                               {"partial", partial},
                               {"rows", analysis::summaryJson(rows)},
                               {"comparisons", analysis::comparisonsJson(comparisons)}});
  } else {
    std::fputs(table.c_str(), stdout);
    std::printf("session: %s\n", sessionPath.c_str());
  }
  std::fflush(stdout);
}

// The parity check's verdict (the blocks themselves are in the log and the session's
// parity.* statistics).
void printParity(const engine::EvaluationSettings& settings, const std::vector<engine::EvaluatedRun>& runs) {
  if (!settings.parityCheck) return;
  for (const engine::EvaluatedRun& run : runs) {
    if (run.mode != engine::EvaluationMode::TeacherForced) continue;
    if (run.parityFlagged == 0)
      std::fprintf(stderr, "parity: %s: training and inference paths agree on all %lld blocks\n", run.name.c_str(),
                   static_cast<long long>(run.steps));
    else
      std::fprintf(stderr, "parity: %s: %lld of %lld blocks draft differently through the training and inference paths\n",
                   run.name.c_str(), static_cast<long long>(run.parityFlagged), static_cast<long long>(run.steps));
  }
}

// The evaluation itself; evaluateIntoSession() adds the error events around it.
int evaluate(const engine::EvaluationSettings& settings, const std::string& sessionPath, session::OpenMode mode,
             ProgressReporter& progress) {
  // A bad prompt file is refused before the session file exists. (Loading the models can take
  // minutes: the engine reports its stages as progress.)
  engine::readPromptSet(settings.prompts, {.skipMalformed = settings.skipBadPrompts});
  session::Writer writer(sessionPath, {.mode = mode});
  engine::SessionSink sink(writer);
  CancellationToken cancel;
  const CancelOnInterrupt interrupt(cancel);
  try {
    const auto runs =
        engine::runEvaluation(settings, sink, [&](const engine::EvaluationProgress& p) { progress.report(p); }, cancel);
    progress.finish();
    writer.close();
    printSummary(engine::summaryRuns(settings, runs), progress, sessionPath, false);
    printParity(settings, runs);
    return 0;
  } catch (const Error& e) {
    progress.finish();
    writer.close();  // keeps every step recorded so far, in a single valid file
    if (dynamic_cast<const CancelledError*>(&e)) {
      // The engine returns nothing after Ctrl-C, but the session holds every finished prompt.
      try {
        printSummary(analysis::recordedSummaryRuns(sessionPath), progress, sessionPath, true);
      } catch (const std::exception& readBack) {  // the cancellation, not this, decides the exit code
        std::fprintf(stderr, "dflash-eval: no summary of the cancelled run: %s\n", readBack.what());
      }
    } else if (mode != session::OpenMode::Append && session::Reader(sessionPath).runs().empty()) {
      // Refused before anything was recorded (a drafter that does not fit, a block size it was
      // not trained for): no empty session is left to block the corrected rerun.
      std::filesystem::remove(sessionPath);
    }
    throw;
  }
}

}  // namespace

int evaluateIntoSession(const engine::EvaluationSettings& settings, const std::string& sessionPath,
                        session::OpenMode mode, const SessionReport& report) {
  ProgressReporter progress(report.progress, report.context);
  try {
    return evaluate(settings, sessionPath, mode, progress);
  } catch (const Error& e) {
    progress.event(dynamic_cast<const CancelledError*>(&e) ? "cancelled" : "error",
                   {{"session", sessionPath}, {"message", e.what()}, {"exit_code", e.exitCode()}});
    throw;
  }
}

}  // namespace dfi::eval
