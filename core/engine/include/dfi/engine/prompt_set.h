#pragma once
// The prompts of an evaluation, read from JSONL: one object per line with exactly one of
//   "prompt": "text"                         one user turn, the chat template applied;
//   "question": "text"                       the same (GSM8K/MATH-style files);
//   "turns": ["user 1", "user 2", ...]       SpecBench/MT-Bench style: only the FIRST turn is
//                                            evaluated, as its own conversation (later turns
//                                            would need the model's own replies in between);
//   "messages": [{"role":..,"content":..}]   a whole conversation, the template applied, the
//                                            model answering after its last message;
//   "ids": [1, 2, 3]                         already tokenized, used as is;
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
  std::size_t unevaluatedTurns = 0;        // "turns" after the first, which are not run
};

// A line left out by PromptSetOptions::skipMalformed: why, as "file: line N: field: message".
struct SkippedPromptLine {
  std::size_t line = 0;
  std::string message;
};

struct PromptSet {
  std::vector<PromptSpec> prompts;
  std::vector<SkippedPromptLine> skipped;
};

struct PromptSetOptions {
  // false: the first malformed line (or duplicate id) throws; true: it is skipped and listed.
  bool skipMalformed = false;
};

// Throws dfi::FormatError naming the file, the line and the field for a malformed line,
// dfi::ValidationError for duplicate ids (unless skipped), dfi::IoError when the file cannot be
// read, and FormatError when no prompt is left.
PromptSet readPromptSet(const std::filesystem::path& jsonl, PromptSetOptions options = {});
std::vector<PromptSpec> loadPromptSet(const std::filesystem::path& jsonl);  // refuses bad lines

// The prompts of shard `index` of `count` (prompt i goes to shard i % count), so several
// machines can split one prompt set and `dflash-eval merge` joins their sessions.
std::vector<PromptSpec> shardOf(const std::vector<PromptSpec>& prompts, int index, int count);

// What one process evaluates: the first `limit` prompts of the file (all when nullopt), then
// shard `index` of `count` of those. Limiting first means the shards of one limited run
// together cover exactly the first `limit` prompts, whatever the number of shards.
std::vector<PromptSpec> selectPrompts(const std::vector<PromptSpec>& prompts, std::optional<std::int64_t> limit,
                                      int index, int count);

}  // namespace dfi::engine
