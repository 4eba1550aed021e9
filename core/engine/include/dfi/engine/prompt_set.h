#pragma once
// The prompts of an evaluation, read from JSONL: one object per line with either
//   "prompt": "text"                         (one user turn, the chat template applied), or
//   "messages": [{"role":..,"content":..}]   (a conversation, the template applied), or
//   "ids": [1, 2, 3]                         (already tokenized, used as is),
// and optionally "id" (kept as the prompt's stable id; default: the line's index among
// prompts) and "dataset". Blank lines and lines starting with '#' are skipped.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dfi::engine {

struct PromptMessage {
  std::string role;
  std::string content;
};

struct PromptSpec {
  std::int64_t id = 0;
  std::string dataset;
  std::vector<PromptMessage> messages;     // empty when ids are given
  std::vector<std::int32_t> ids;           // empty when messages are given
  std::size_t line = 0;                    // 1-based line in the file, for messages
};

// Throws dfi::FormatError naming the file, the line and the field for a malformed line,
// dfi::ValidationError for duplicate ids, dfi::IoError when the file cannot be read.
std::vector<PromptSpec> loadPromptSet(const std::filesystem::path& jsonl);

// The prompts of shard `index` of `count` (prompt i goes to shard i % count), so several
// machines can split one prompt set and `dflash-eval merge` joins their sessions.
std::vector<PromptSpec> shardOf(const std::vector<PromptSpec>& prompts, int index, int count);

}  // namespace dfi::engine
