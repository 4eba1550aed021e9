#include "command_inputs.h"

#include <span>

#include <CLI/CLI.hpp>

#include "dfi/base/error.h"
#include "dfi/engine/memory_plan.h"
#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/tokenizer.h"

namespace dfi::eval {

std::vector<std::int64_t> TokenInput::tokenIds(const std::string& modelDir, const std::string& command) const {
  if (!*textOption && !*idsOption) throw UsageError("give --text or --ids", {.item = command});
  if (text.empty()) return ids;
  const auto tok = tokenizer::Tokenizer::fromDirectory(modelDir);
  std::string input = text;
  if (chat) {
    const auto& chat = tok.chatTemplate();
    if (!chat) throw UsageError("--chat: the model directory has no chat template", {.file = modelDir});
    const tokenizer::ChatMessage message{"user", text};
    input = chat->render(std::span(&message, 1), {.enableThinking = !noThinking});
  }
  const std::vector<std::int32_t> encoded = tok.encode(input);
  return {encoded.begin(), encoded.end()};
}

void addTokenInputOptions(CLI::App& command, TokenInput& input, const std::string& whose) {
  input.textOption = command.add_option("--text", input.text, "Input text (tokenized with " + whose + " tokenizer)");
  input.idsOption = command.add_option("--ids", input.ids, "Input token ids, comma separated")->delimiter(',');
  input.textOption->excludes(input.idsOption);
  command.add_flag("--chat", input.chat, "Wrap --text as one user turn in " + whose + " chat template")
      ->needs(input.textOption);
  command.add_flag("--no-thinking", input.noThinking, "With --chat: enable_thinking=false");
}

engine::ModelOptions PlacementOptions::modelOptions() const {
  engine::ModelOptions options{.devices = devices.empty() ? std::vector<std::string>{device} : devices, .dtype = dtype};
  for (const std::string& entry : maxMemory) {
    const std::size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0)
      throw UsageError("--max-memory takes DEVICE=SIZE (cuda:0=70GiB), got '" + entry + "'", {.item = "max_memory"});
    options.maxMemory[entry.substr(0, equals)] = engine::parseByteSize(entry.substr(equals + 1));
  }
  return options;
}

void addPlacementOptions(CLI::App& command, PlacementOptions& placement) {
  auto* device = command.add_option("--device", placement.device, "cpu, cuda or cuda:N")->capture_default_str();
  command.add_option("--devices", placement.devices, "Several devices, the target's layers split across them in order")
      ->delimiter(',')
      ->excludes(device);
  command.add_option("--dtype", placement.dtype, "fp32, bf16 or fp16")->capture_default_str();
  command.add_option("--max-memory", placement.maxMemory,
                     "DEVICE=SIZE (cuda:0=70GiB): the most weight memory to use on a device, below what it has free")
      ->delimiter(',');
}

}  // namespace dfi::eval
