#include "session_evaluation.h"

#include <csignal>
#include <cstdio>
#include <string>

#include "dfi/base/error.h"
#include "dfi/session/writer.h"

namespace dfi::eval {
namespace {

std::string formatTau(std::optional<double> tau) {
  if (!tau) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", *tau);
  return text;
}

engine::CancellationToken* activeCancel = nullptr;

// Ctrl-C asks the evaluation to stop after the current prompt, so the session stays whole.
void onInterrupt(int) {
  if (activeCancel) activeCancel->cancel();
}

void printSummaryTable(const std::vector<engine::RunSummary>& runs) {
  std::printf("%-48s %7s %9s %11s %9s\n", "run (drafter/mode/mask)", "steps", "tau(ref)", "tau(sglang)",
              "tau(vllm)");
  for (const auto& r : runs)
    std::printf("%-48s %7lld %9s %11s %9s\n", r.name.c_str(), static_cast<long long>(r.steps),
                formatTau(r.tauReference).c_str(), formatTau(r.tauSglang).c_str(),
                formatTau(r.tauVllm).c_str());
  std::printf(
      "tau(ref): mean over responses of each response's mean acceptance length (z-lab benchmark)\n"
      "tau(sglang): completion tokens / verify steps per request, averaged (live runs only)\n"
      "tau(vllm): 1 + accepted drafts / drafts, pooled over all steps\n");
}

}  // namespace

int evaluateIntoSession(const engine::EvaluationSettings& settings, const std::string& sessionPath,
                        bool overwrite) {
  session::Writer writer(sessionPath,
                         {.mode = overwrite ? session::OpenMode::Overwrite : session::OpenMode::CreateNew});
  engine::SessionSink sink(writer);
  engine::CancellationToken cancel;
  activeCancel = &cancel;
  std::signal(SIGINT, onInterrupt);
  auto progress = [](const engine::EvaluationProgress& p) {
    std::fprintf(stderr, "[%lld/%lld] %s  elapsed %.1fs  eta %.1fs\n", static_cast<long long>(p.done),
                 static_cast<long long>(p.total), p.current.c_str(), p.elapsedSeconds, p.etaSeconds);
  };
  try {
    const auto runs = engine::runEvaluation(settings, sink, progress, cancel);
    writer.close();
    activeCancel = nullptr;
    printSummaryTable(runs);
    std::printf("session: %s\n", sessionPath.c_str());
    return 0;
  } catch (const Error&) {
    activeCancel = nullptr;
    writer.close();  // keeps every step recorded so far, in a single valid file
    throw;
  }
}

}  // namespace dfi::eval
