#pragma once
// What another pipeline recorded for a prompt set, read from its own output (`dflash-eval
// import`): per response the prompt, the generated tokens and the acceptance length of every
// verify step, as far as the format carries them. Torch-free; the formats and the versions
// they follow are listed in importFormats() and in the README ("Importing other pipelines").

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::imports {

enum class Format { Zlab, Vllm, Sglang, Jsonl };

struct FormatInfo {
  Format format;
  std::string_view name;     // the --format value
  std::string_view follows;  // the producer and version whose output the reader follows
};
const std::vector<FormatInfo>& importFormats();
// Throws dfi::UsageError naming the supported formats.
Format parseFormat(std::string_view name);
const FormatInfo& formatInfo(Format format);

struct ImportedResponse {
  std::size_t line = 0;  // the record's line in its file (1-based), for messages
  std::optional<session::PromptId> promptId;  // absent: matched on promptTokens
  std::vector<session::TokenId> promptTokens;  // empty when the format does not carry them
  // Generated tokens, the one sampled from the prefill logits first (each step's anchor is the
  // last token of the step before); empty when the format does not carry them.
  std::vector<session::TokenId> outputTokens;
  // Per verify step: tokens it committed (accepted drafts + the bonus, as z-lab counts them;
  // a step cut by the budget or a stop token counts what it kept). In step order when
  // stepOrderKnown, else only their multiset (vLLM's and SGLang's per-request histograms).
  std::vector<int> acceptLengths;
  bool stepOrderKnown = true;
  // Per step, the drafter's proposal (B-1 slots) where the format records it, else empty.
  std::vector<std::vector<session::TokenId>> draftTokens;
};

struct ImportedRecords {
  Format format = Format::Jsonl;
  std::string file;
  std::optional<int> blockSize;  // where the records say
  std::vector<ImportedResponse> responses;
  // Fields the reader does not know (vLLM's and SGLang's objects grow fields with every release;
  // those the acceptance does not depend on are reported, by name, not refused).
  std::vector<std::string> ignoredFields;
};

// Throws dfi::IoError when the file cannot be read, dfi::FormatError naming the file and line
// for a malformed line, and dfi::ValidationError naming the field for an unknown field (in the
// z-lab and JSONL formats), an unsupported version or inconsistent values.
ImportedRecords readImportedRecords(Format format, const std::filesystem::path& file);

// "z-lab dflash 0.1.0 benchmark records: FILE": RunRecord::origin of the imported run.
std::string originText(const ImportedRecords& records);

// A token the other pipeline did not record (a draft past the accepted ones, the target's token
// past the bonus, any token of a response without output ids). Negative, so no vocabulary has it;
// the GUI shows no text for it.
inline constexpr session::TokenId kUnknownToken = -1;

// The session records of one imported response as a live run's steps of blocks of `blockSize`
// (runId and ids left 0): anchorPosition from the cumulative output length, acceptedCount from
// the acceptance length, target tokens and the bonus from the output tokens where known, draft
// tokens where recorded, else the accepted ones; every other slot holds kUnknownToken.
// Throws dfi::ValidationError (file and line) for a step longer than the block or a recorded
// draft wider than it.
std::vector<session::StepRecord> importedSteps(const ImportedResponse& response, std::int64_t promptLength,
                                               int blockSize, const std::string& file = {});

}  // namespace dfi::imports
