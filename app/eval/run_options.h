#pragma once
// The evaluation options shared by `run` (command line) and `serve` (JSON requests).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/engine/evaluation.h"
#include "shard_spec.h"

namespace CLI {
class App;
}

namespace dfi::eval {

struct RunOptions {
  std::string target;
  std::vector<std::string> drafters;
  std::string prompts;
  // live, teacher (= teacher-forced), both (= live,teacher), ddtree; a comma list.
  std::vector<std::string> modes{"live", "teacher-forced", "ddtree"};
  // On the command line `--ddtree N` both sets the budget and asks for DDTree-N runs (0: none);
  // a GUI request lists "ddtree" among its modes and only sets the budget.
  bool ddtreeByBudget = false;
  int ddtreeBudget = 8;
  std::vector<std::string> maskVariants{"reference"};
  std::string anchors = "live";
  std::optional<int> blockSize;
  int maxNewTokens = 128;
  std::optional<std::int64_t> limit;
  int topK = 8;
  std::string device = "cpu";
  std::string dtype = "fp32";
  bool noChat = false;
  std::string thinking = "off";
  std::string shard = "0/1";
  bool skipBadPrompts = false;
  bool noParity = false;
  bool hiddenStatistics = false;

  // Throws dfi::UsageError naming the option for an unknown mode, variant, dtype, thinking
  // value, block size below 2 or shard; `env` resolves --shard auto.
  engine::EvaluationSettings toSettings(const EnvLookup& env = processEnvironment()) const;
};

void addRunOptions(CLI::App& command, RunOptions& options);
// Reads the same options from a JSON object (the GUI's run request); missing keys keep defaults.
RunOptions runOptionsFromJson(const nlohmann::json& request);

}  // namespace dfi::eval
