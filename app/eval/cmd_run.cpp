// dflash-eval run: evaluate drafters against a target on a prompt set into a session file.

#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/base/error.h"
#include "dfi/engine/evaluation.h"
#include "dfi/session/writer.h"
#include "run_options.h"

namespace dfi::eval {
namespace {

engine::CancellationToken* activeCancel = nullptr;

// Ctrl-C asks the evaluation to stop after the current prompt, so the session stays whole.
void onInterrupt(int) {
  if (activeCancel) activeCancel->cancel();
}

std::string formatTau(double tau) {
  if (std::isnan(tau)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", tau);
  return text;
}

void printSummary(const std::vector<engine::RunSummary>& runs) {
  std::printf("%-44s %8s %10s %10s %10s\n", "run (drafter/mode/mask)", "steps", "tau(ref)",
              "tau(sglang)", "tau(vllm)");
  for (const auto& r : runs)
    std::printf("%-44s %8lld %10s %10s %10s\n", r.name.c_str(), static_cast<long long>(r.steps),
                formatTau(r.tauReference).c_str(), formatTau(r.tauSglang).c_str(),
                formatTau(r.tauVllm).c_str());
  std::printf("tau(ref): mean over responses of the mean acceptance length (z-lab benchmark); "
              "tau(sglang): completion tokens / verify steps per request; tau(vllm): 1 + accepted "
              "drafts / drafts, pooled. Teacher-forced and DDTree runs have no SGLang figure.\n");
}

}  // namespace

void registerRunCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Evaluate drafters against a target on a prompt set into a .dfi session");
  auto options = std::make_shared<RunOptions>();
  auto session = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  addRunOptions(*sub, *options);
  sub->add_option("-o,--session", *session, "Session file to write (.dfi)")->required();
  sub->add_flag("--overwrite", *overwrite, "Replace an existing session file");
  setAction(*sub, [options, session, overwrite] {
    const engine::EvaluationSettings settings = options->toSettings();
    session::Writer writer(*session, {.mode = *overwrite ? session::OpenMode::Overwrite
                                                         : session::OpenMode::CreateNew});
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
      printSummary(runs);
      std::printf("session: %s\n", session->c_str());
    } catch (const Error&) {
      writer.close();  // keeps every step recorded so far, in a single valid file
      throw;
    }
    activeCancel = nullptr;
    return 0;
  });
}

}  // namespace dfi::eval
