// dflash-eval watch FOLDER: keeps evaluating each new checkpoint a training run writes into
// FOLDER, appending its runs to one session, so the served acceptance by step grows beside the
// training log (summary --series FOLDER). Resumable: a checkpoint the session already has runs of
// is skipped, one still being written (no config.json yet, a safetensors file cut short) waits
// for the next look. Ctrl-C stops after the prompt in progress; everything recorded stays.

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "cancel_on_interrupt.h"
#include "commands.h"
#include "dfi/analysis/checkpoint_series.h"
#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "run_options.h"
#include "series_report.h"
#include "session_evaluation.h"

namespace dfi::eval {
namespace {

struct WatchOptions {
  std::string folder;
  std::string session;
  double pollSeconds = 60;
  bool once = false;
  std::string progress = "auto";
};

// Evaluates every loadable checkpoint the session lacks, in step order; returns how many.
int evaluateNewCheckpoints(const WatchOptions& watch, const RunCommandLine& options, const EnvLookup& env) {
  std::vector<analysis::SeriesCheckpoint> checkpoints;
  try {
    checkpoints = analysis::discoverCheckpoints(watch.folder);
  } catch (const ValidationError&) {
    return 0;  // nothing with a step saved yet
  }
  // Read once a look: each checkpoint evaluated below is a new one.
  const std::set<std::filesystem::path> done = evaluatedDrafters(watch.session);
  int evaluated = 0;
  for (const analysis::SeriesCheckpoint& checkpoint : checkpoints) {
    if (done.contains(std::filesystem::weakly_canonical(checkpoint.dir))) continue;
    if (const std::string problem = analysis::checkpointProblem(checkpoint.dir); !problem.empty()) {
      logText("eval", LogLevel::Info, "watch: waiting for " + checkpoint.dir.string() + ": " + problem);
      continue;
    }
    logText("eval", LogLevel::Info, "watch: evaluating " + checkpoint.dir.string() + " (step " +
                                        std::to_string(checkpoint.step) + ")");
    RunCommandLine round = options;
    round.settings.drafters = {checkpoint.dir};
    const bool exists = std::filesystem::exists(watch.session);
    evaluateIntoSession(round.resolve(env), watch.session,
                        exists ? session::OpenMode::Append : session::OpenMode::CreateNew,
                        {.progress = parseProgressStyle(watch.progress)});
    ++evaluated;
  }
  return evaluated;
}

// Sleeps `seconds`; false when Ctrl-C came first.
bool waitUnlessInterrupted(double seconds) {
  CancellationToken cancel;
  const CancelOnInterrupt interrupt(cancel);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !cancel.cancelled();
}

}  // namespace

void registerWatchCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("watch", "Evaluate each new checkpoint of a training run as it is written, into one session");
  auto watch = std::make_shared<WatchOptions>();
  auto options = std::make_shared<RunCommandLine>();
  sub->add_option("folder", watch->folder,
                  "The training run's output folder (its checkpoints as run --drafter-series finds them)")
      ->required()->check(CLI::ExistingDirectory);
  addRunOptions(*sub, *options);
  sub->add_option("-o,--out,--session", watch->session, "Session file: created, then appended to")->required();
  sub->add_option("--poll-seconds", watch->pollSeconds, "How often to look for new checkpoints")->capture_default_str();
  sub->add_flag("--once", watch->once, "Evaluate what is there now and stop (a cron job's or a CI step's watch)");
  sub->add_option("--progress", watch->progress, "auto | bar | plain | json | none")->capture_default_str();
  sub->footer("Then: dflash-eval summary SESSION --series FOLDER (tau by step beside the training log). "
              "Ctrl-C stops after the prompt in progress (exit code 130); a checkpoint cut short by it keeps "
              "the prompts it finished and is not evaluated again by the next watch.");
  setAction(*sub, [watch, options] {
    if (!options->settings.drafters.empty() || !options->drafterSeries.empty())
      throw UsageError("watch takes its checkpoints from FOLDER: leave out --drafter and --drafter-series");
    if (watch->pollSeconds <= 0) throw UsageError("--poll-seconds must be more than 0");
    const EnvLookup env = processEnvironment();
    int total = 0;
    for (;;) {
      total += evaluateNewCheckpoints(*watch, *options, env);
      if (watch->once) break;
      if (!waitUnlessInterrupted(watch->pollSeconds)) {
        logText("eval", LogLevel::Info, "watch: stopped; " + std::to_string(total) + " checkpoints evaluated");
        return 130;
      }
    }
    logText("eval", LogLevel::Info, "watch: " + std::to_string(total) + " checkpoints evaluated");
    return 0;
  });
}

}  // namespace dfi::eval
