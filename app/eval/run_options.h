#pragma once
// The evaluation options shared by `run` (command line) and `serve` (the "run" request).

#include "dfi/engine/evaluation.h"
#include "dfi/protocol/messages.h"
#include "shard_spec.h"

namespace CLI {
class App;
}

namespace dfi::eval {

// The option fields are protocol::RunOptions', the "run" request's, so `run` and the GUI name
// the same options; this adds what only the command line has and the validation of both.
struct RunOptions : protocol::RunOptions {
  // On the command line `--ddtree N` both sets the budget and asks for DDTree-N runs (0: none);
  // a GUI request lists "ddtree" among its modes and only sets the budget.
  bool ddtreeByBudget = false;

  // Throws dfi::UsageError naming the option for an unknown mode, variant, dtype, thinking
  // value, block size below 2 or shard; `env` resolves --shard auto.
  engine::EvaluationSettings toSettings(const EnvLookup& env = processEnvironment()) const;
};

void addRunOptions(CLI::App& command, RunOptions& options);

}  // namespace dfi::eval
