#pragma once
// How the live loop drafts and counts the last steps of a response. Torch-free: the run
// options, the settings and the summary name it.

#include <optional>
#include <string_view>

namespace dfi::engine {

enum class StepCounting {
  // z-lab's dflash 0.1.0 (the published reference, the default): the last block is shortened to
  // the tokens the budget has left (min(B, prompt + max_new_tokens - anchor)), a step counts
  // only the tokens within the budget and up to the first stop token, and no step runs when
  // the first generated token is a stop token.
  Dflash,
  // The engine's earlier loop (z-lab's repository of April 2026): every block has B slots and
  // counts its accepted drafts and bonus in full, past the budget or a stop token too.
  FullBlocks,
};

// "dflash" or "full-blocks", the spelling of run's --step-counting and the recorded settings.
std::string_view stepCountingName(StepCounting counting);
std::optional<StepCounting> parseStepCounting(std::string_view text);
// One line for the summary: what the steps of a live run counted.
std::string_view stepCountingDescription(StepCounting counting);

}  // namespace dfi::engine
