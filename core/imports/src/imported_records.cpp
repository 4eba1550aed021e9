#include "dfi/imports/imported_records.h"

#include <algorithm>

#include "dfi/base/error.h"
#include "format_readers.h"

namespace dfi::imports {

const std::vector<FormatInfo>& importFormats() {
  static const std::vector<FormatInfo> formats{
      {Format::Zlab, "zlab", "z-lab dflash 0.1.0 benchmark records (dflash_generate return_stats)"},
      {Format::Vllm, "vllm", "vLLM RequestOutput (V1 outputs[0].spec_decode_metrics, V0 metrics.spec_token_acceptance_counts)"},
      {Format::Sglang, "sglang", "SGLang /generate response (meta_info.spec_accept_histogram)"},
      {Format::Jsonl, "jsonl", "dflash-inspector import JSONL, format_version 1"},
  };
  return formats;
}

const FormatInfo& formatInfo(Format format) {
  for (const auto& f : importFormats())
    if (f.format == format) return f;
  throw UsageError("unknown import format");
}

Format parseFormat(std::string_view name) {
  std::string names;
  for (const auto& f : importFormats()) {
    if (f.name == name) return f.format;
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  throw UsageError("unknown import format '" + std::string(name) + "' (supported: " + names + ")");
}

ImportedRecords readImportedRecords(Format format, const std::filesystem::path& file) {
  ImportedRecords records;
  records.format = format;
  records.file = file.string();
  switch (format) {
    case Format::Zlab: detail::readZlab(records); break;
    case Format::Vllm: detail::readVllm(records); break;
    case Format::Sglang: detail::readSglang(records); break;
    case Format::Jsonl: detail::readJsonl(records); break;
  }
  if (records.responses.empty()) throw FormatError("no records in the file", {.file = records.file});
  return records;
}

std::string originText(const ImportedRecords& records) {
  return std::string(formatInfo(records.format).follows) + ": " + records.file;
}

std::vector<session::StepRecord> importedSteps(const ImportedResponse& response, std::int64_t promptLength,
                                               int blockSize, const std::string& file) {
  const ErrorContext where{.file = file, .item = "line " + std::to_string(response.line)};
  const auto slots = static_cast<std::size_t>(blockSize - 1);
  std::vector<session::StepRecord> steps;
  const auto& out = response.outputTokens;
  // Tokens are placed only where the steps' order is known: a histogram says how many tokens
  // each step committed, not which.
  const bool tokens = response.stepOrderKnown && !out.empty();
  std::size_t anchor = 0;  // index in `out` of the current step's anchor
  for (std::size_t s = 0; s < response.acceptLengths.size(); ++s) {
    const auto length = static_cast<std::size_t>(response.acceptLengths[s]);
    if (length > static_cast<std::size_t>(blockSize))
      throw ValidationError("step " + std::to_string(s) + " commits " + std::to_string(length) +
                                " tokens, more than a block of " + std::to_string(blockSize),
                            where);
    session::StepRecord step;
    step.stepIndex = static_cast<std::int32_t>(s);
    step.mode = session::EvaluationMode::Live;
    step.anchorPosition = promptLength + static_cast<std::int64_t>(anchor);
    // The formats give the tokens a step committed, not how many drafts matched before a cut
    // (budget or stop token): the step counts as length - 1 accepted drafts and the bonus.
    step.acceptedCount = static_cast<std::int32_t>(length) - 1;
    step.anchorToken = step.bonusToken = kUnknownToken;
    step.draftTokens.assign(slots, kUnknownToken);
    step.targetTokens.assign(slots, kUnknownToken);
    if (tokens) {
      // A file whose steps commit more tokens than its output holds (found by fuzz_user_files).
      if (anchor + length >= out.size())
        throw ValidationError("step " + std::to_string(s) + " commits tokens up to output position " +
                                  std::to_string(anchor + length) + ", but the record's output has " +
                                  std::to_string(out.size()) + " tokens",
                              where);
      step.anchorToken = out[anchor];
      // The committed tokens are the target's at slots 0..length-1 (the accepted drafts, then the
      // bonus, which for a whole accepted block lies past the last slot).
      for (std::size_t i = 0; i < length; ++i) {
        if (i < slots) step.targetTokens[i] = out[anchor + 1 + i];
        if (i + 1 < length) step.draftTokens[i] = out[anchor + 1 + i];
      }
      step.bonusToken = out[anchor + length];
    }
    if (s < response.draftTokens.size()) {
      const auto& drafts = response.draftTokens[s];
      if (drafts.size() > slots)
        throw ValidationError("step " + std::to_string(s) + " records " + std::to_string(drafts.size()) +
                                  " draft tokens, more than the " + std::to_string(slots) + " slots of a block of " +
                                  std::to_string(blockSize),
                              where);
      std::ranges::copy(drafts, step.draftTokens.begin());
    }
    steps.push_back(std::move(step));
    anchor += length;
  }
  return steps;
}

}  // namespace dfi::imports
