#pragma once
// The evaluation options shared by `run` (command line) and `serve` (JSON requests).

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/engine/evaluation.h"

namespace CLI {
class App;
}

namespace dfi::eval {

struct RunOptions {
  std::string target;
  std::vector<std::string> drafters;
  std::string prompts;
  std::vector<std::string> modes{"live", "teacher-forced", "ddtree"};
  std::vector<std::string> maskVariants{"reference"};
  std::string anchors = "live";
  int ddtreeBudget = 8;
  int maxNewTokens = 128;
  int topK = 8;
  std::string device = "cpu";
  std::string dtype = "fp32";
  bool noChat = false;
  bool enableThinking = false;
  std::string shard = "0/1";

  // Throws dfi::UsageError naming the option for an unknown mode, variant, dtype or shard.
  engine::EvaluationSettings toSettings() const;
};

void addRunOptions(CLI::App& command, RunOptions& options);
// Reads the same options from a JSON object (the GUI's run request); missing keys keep defaults.
RunOptions runOptionsFromJson(const nlohmann::json& request);

}  // namespace dfi::eval
