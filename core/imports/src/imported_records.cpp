#include "dfi/imports/imported_records.h"

#include "dfi/base/error.h"
#include "format_readers.h"

namespace dfi::imports {

const std::vector<FormatInfo>& importFormats() {
  static const std::vector<FormatInfo> formats{
      {Format::Zlab, "zlab", "z-lab dflash 0.1.0 benchmark records (dflash_generate return_stats)"},
      {Format::Vllm, "vllm", "vLLM 0.8-0.10 V0-engine RequestOutput (metrics.spec_token_acceptance_counts)"},
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

std::vector<session::StepRecord> importedSteps(const ImportedResponse& response, std::int64_t promptLength) {
  std::vector<session::StepRecord> steps;
  const auto& out = response.outputTokens;
  // Tokens are placed only where the steps' order is known: a histogram says how many tokens
  // each step committed, not which.
  const bool tokens = response.stepOrderKnown && !out.empty();
  std::size_t anchor = 0;  // index in `out` of the current step's anchor
  for (std::size_t s = 0; s < response.acceptLengths.size(); ++s) {
    const int length = response.acceptLengths[s];
    session::StepRecord step;
    step.stepIndex = static_cast<std::int32_t>(s);
    step.mode = session::EvaluationMode::Live;
    step.anchorPosition = promptLength + static_cast<std::int64_t>(anchor);
    // The formats give the tokens a step committed, not how many drafts matched before a cut
    // (budget or stop token): the step counts as length - 1 accepted drafts and the bonus.
    step.acceptedCount = length - 1;
    if (tokens) {
      step.anchorToken = out[anchor];
      const auto first = out.begin() + static_cast<std::ptrdiff_t>(anchor) + 1;
      // What the target said at the committed positions; the rest of the block is unknown.
      step.targetTokens.assign(first, first + length);
      step.bonusToken = step.targetTokens.back();
      // The drafter's whole block where recorded; else only the accepted drafts are known.
      if (s < response.draftTokens.size()) step.draftTokens = response.draftTokens[s];
      else step.draftTokens.assign(first, first + length - 1);
    } else if (s < response.draftTokens.size()) {
      step.draftTokens = response.draftTokens[s];
    }
    steps.push_back(std::move(step));
    anchor += static_cast<std::size_t>(length);
  }
  return steps;
}

}  // namespace dfi::imports
