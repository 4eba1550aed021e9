#pragma once
// Inputs that `forward` and `draft` share: the token sequence (--text, optionally as one chat
// turn, or --ids) and where the model runs (--device / --devices, --dtype, --max-memory).

#include <cstdint>
#include <string>
#include <vector>

#include "dfi/engine/model_options.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace dfi::eval {

struct TokenInput {
  std::string text;
  std::vector<std::int64_t> ids;
  bool chat = false;
  bool noThinking = false;
  CLI::Option* textOption = nullptr;
  CLI::Option* idsOption = nullptr;

  // --text tokenized with `modelDir`'s tokenizer (wrapped in its chat template with --chat),
  // else --ids; throws dfi::UsageError naming `command` when neither was given.
  std::vector<std::int64_t> tokenIds(const std::string& modelDir, const std::string& command) const;
};
// --text, --ids, --chat, --no-thinking; `whose` names the tokenizer in the help ("the model's").
void addTokenInputOptions(CLI::App& command, TokenInput& input, const std::string& whose);

struct PlacementOptions {
  std::string device = "cpu";
  std::vector<std::string> devices;
  std::string dtype = "fp32";
  std::vector<std::string> maxMemory;  // DEVICE=SIZE entries

  // Throws dfi::UsageError for a malformed --max-memory entry.
  engine::ModelOptions modelOptions() const;
};
// --device, --devices (excluding each other), --dtype, --max-memory.
void addPlacementOptions(CLI::App& command, PlacementOptions& placement);

}  // namespace dfi::eval
