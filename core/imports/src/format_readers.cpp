// The four record formats `dflash-eval import` reads. Each reader follows one producer's own
// output, read in its source (the versions are in imported_records.cpp's table); where the
// producer records less than a step's worth (vLLM and SGLang keep per-request counts, not the
// order of the steps), the response says so (stepOrderKnown) rather than inventing an order.

#include <algorithm>
#include <numeric>

#include "dfi/imports/imported_records.h"
#include "format_readers.h"
#include "json_lines.h"

namespace dfi::imports::detail {
namespace {

using nlohmann::json;

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

// Generated tokens = the token sampled at prefill + every step's committed tokens: the
// convention of dflash_generate (output_ids ends at start + 1) and of the documented JSONL.
void checkOutputLength(const ImportedResponse& r, const Where& where) {
  if (r.outputTokens.empty()) return;
  const auto expected = static_cast<std::size_t>(1 + sum(r.acceptLengths));
  if (r.outputTokens.size() != expected)
    where.invalid("output_ids", std::to_string(r.outputTokens.size()) + " generated tokens, but the token sampled at "
                                "prefill and the steps' acceptance lengths make " + std::to_string(expected));
}

// Steps with acceptance length L from counts of steps that accepted exactly L-1 drafts
// (SGLang's histogram), in ascending length: the order of the steps is not recorded.
std::vector<int> lengthsFromHistogram(const std::vector<int>& exactlyAccepted) {
  std::vector<int> lengths;
  for (std::size_t n = 0; n < exactlyAccepted.size(); ++n) lengths.insert(lengths.end(), exactlyAccepted[n], int(n) + 1);
  return lengths;
}

}  // namespace

// z-lab dflash 0.1.0: benchmark.py keeps, per prompt and turn, the namespace that
// dflash_generate(..., return_stats=True) returns (model.py); one such namespace a line, its
// tensors as lists (output_ids is the batch's row 0: prompt + generated). The benchmark's order
// is its shuffled dataset's, so responses are matched on their prompt tokens.
void readZlab(ImportedRecords& records) {
  forEachJsonLine(records.file, [&](const json& j, const Where& where) {
    refuseUnknownFields(j, {"output_ids", "num_input_tokens", "num_output_tokens", "time_to_first_token",
                            "time_per_output_token", "acceptance_lengths"},
                        where);
    ImportedResponse r;
    r.line = where.line;
    const auto ids = tokenList(j, "output_ids", where);
    const auto inputs = integerField(j, "num_input_tokens", where, 1);
    if (inputs >= static_cast<std::int64_t>(ids.size()))
      where.invalid("num_input_tokens", "not below the length of output_ids (" + std::to_string(ids.size()) + ")");
    r.promptTokens.assign(ids.begin(), ids.begin() + inputs);
    r.outputTokens.assign(ids.begin() + inputs, ids.end());
    if (j.contains("num_output_tokens") &&
        integerField(j, "num_output_tokens", where) != static_cast<std::int64_t>(r.outputTokens.size()))
      where.invalid("num_output_tokens", "differs from output_ids minus num_input_tokens (" +
                                             std::to_string(r.outputTokens.size()) + ")");
    r.acceptLengths = countList(j, "acceptance_lengths", where, 1);
    checkOutputLength(r, where);
    records.responses.push_back(std::move(r));
  });
}

// The documented JSONL (README, "Importing other pipelines"), format_version 1.
void readJsonl(ImportedRecords& records) {
  forEachJsonLine(records.file, [&](const json& j, const Where& where) {
    refuseUnknownFields(j, {"format_version", "prompt_id", "prompt_ids", "output_ids", "acceptance_lengths",
                            "draft_tokens", "block_size"},
                        where);
    if (j.contains("format_version") && integerField(j, "format_version", where) != 1)
      where.invalid("format_version", "version " + j["format_version"].dump() + " is not supported (only 1)");
    ImportedResponse r;
    r.line = where.line;
    if (j.contains("prompt_id")) r.promptId = integerField(j, "prompt_id", where);
    if (j.contains("prompt_ids")) r.promptTokens = tokenList(j, "prompt_ids", where);
    if (!r.promptId && r.promptTokens.empty()) where.fail("prompt_id", "missing (give prompt_id or prompt_ids)");
    if (j.contains("output_ids")) r.outputTokens = tokenList(j, "output_ids", where);
    r.acceptLengths = countList(j, "acceptance_lengths", where, 1);
    if (j.contains("draft_tokens")) {
      const json& drafts = j["draft_tokens"];
      if (!drafts.is_array() || drafts.size() != r.acceptLengths.size())
        where.fail("draft_tokens", "expected one array of token ids per step (" +
                                       std::to_string(r.acceptLengths.size()) + ")");
      for (std::size_t s = 0; s < drafts.size(); ++s)
        r.draftTokens.push_back(tokenList(json{{"draft_tokens", drafts[s]}}, "draft_tokens", where));
    }
    if (j.contains("block_size")) {
      const int block = static_cast<int>(integerField(j, "block_size", where, 2));
      if (records.blockSize && *records.blockSize != block)
        where.invalid("block_size", std::to_string(block) + " differs from an earlier line's " +
                                        std::to_string(*records.blockSize));
      records.blockSize = block;
    }
    if (records.blockSize)
      for (int length : r.acceptLengths)
        if (length > *records.blockSize)
          where.invalid("acceptance_lengths", "a length of " + std::to_string(length) + " exceeds the block size " +
                                                  std::to_string(*records.blockSize));
    checkOutputLength(r, where);
    records.responses.push_back(std::move(r));
  });
}

namespace {

// The V1 engine's per-request counts (vLLM 0.34 vllm/v1/metrics/stats.py RequestSpecDecodeMetrics,
// written with --per-request-spec-decode-metrics): histogram[j] counts the verify steps that
// accepted exactly j drafts; at the `detailed` level per_step_accepted/per_step_drafted give the
// steps in order, which makes the responses comparable step by step.
void readVllmV1Counts(const json& m, const Where& where, ImportedResponse& r) {
  const std::string at = "outputs[0].spec_decode_metrics.";
  for (const char* field : {"num_spec_tokens", "histogram"})
    if (!m.contains(field)) where.fail(at + field, "missing");
  const auto histogram = countList(m, "histogram", where, 0);
  if (histogram.size() != static_cast<std::size_t>(integerField(m, "num_spec_tokens", where, 0)) + 1)
    where.invalid(at + "histogram", "expected num_spec_tokens + 1 counts, one per accepted-draft count");
  const bool ordered = m.contains("per_step_accepted") && m["per_step_accepted"].is_array() &&
                       !m["per_step_accepted"].empty();
  if (!ordered) {
    r.acceptLengths = lengthsFromHistogram(histogram);
    r.stepOrderKnown = false;
    return;
  }
  const auto accepted = countList(m, "per_step_accepted", where, 0);
  const auto drafted = countList(m, "per_step_drafted", where, 0);
  if (drafted.size() != accepted.size())
    where.invalid(at + "per_step_drafted", "expected one count per step of per_step_accepted");
  std::vector<int> counted(histogram.size(), 0);
  for (std::size_t s = 0; s < accepted.size(); ++s) {
    if (accepted[s] > drafted[s] || static_cast<std::size_t>(accepted[s]) >= counted.size())
      where.invalid(at + "per_step_accepted", "step " + std::to_string(s) + " accepts more drafts than it had");
    ++counted[static_cast<std::size_t>(accepted[s])];
    r.acceptLengths.push_back(accepted[s] + 1);
  }
  if (counted != histogram) where.invalid(at + "histogram", "differs from the counts of per_step_accepted");
  if (m.contains("num_draft_tokens") && integerField(m, "num_draft_tokens", where) != sum(drafted))
    where.invalid(at + "num_draft_tokens", "differs from the sum of per_step_drafted");
}

// The V0 engine's RequestMetrics (vllm/sequence.py, vLLM 0.8-0.9): spec_token_acceptance_counts[k]
// counts the verify steps that accepted at least k drafts, [0] every step (vLLM's own mean
// acceptance length is sum(counts) / counts[0]).
void readVllmV0Counts(const json& j, const Where& where, ImportedRecords& records, ImportedResponse& r) {
  const auto metrics = j.find("metrics");
  if (metrics == j.end() || !metrics->is_object())
    where.fail("metrics", "missing: the request's metrics carry its speculative-decoding counts (V0), or "
                          "outputs[0].spec_decode_metrics (V1, --per-request-spec-decode-metrics)");
  for (auto& f : unknownFields(*metrics, {"arrival_time", "last_token_time", "first_scheduled_time",
                                          "first_token_time", "time_in_queue", "finished_time", "scheduler_time",
                                          "model_forward_time", "model_execute_time", "spec_token_acceptance_counts"},
                               "metrics."))
    records.ignoredFields.push_back(f);
  if (!metrics->contains("spec_token_acceptance_counts") || (*metrics)["spec_token_acceptance_counts"].is_null())
    where.fail("metrics.spec_token_acceptance_counts",
               "missing: was the request decoded speculatively? (a V1 engine writes outputs[0].spec_decode_metrics "
               "with --per-request-spec-decode-metrics)");
  const auto atLeast = countList(*metrics, "spec_token_acceptance_counts", where, 0);
  std::vector<int> exactly;
  for (std::size_t k = 0; k < atLeast.size(); ++k) {
    const int next = k + 1 < atLeast.size() ? atLeast[k + 1] : 0;
    if (next > atLeast[k])
      where.invalid("metrics.spec_token_acceptance_counts", "counts of steps accepting at least k drafts must not "
                                                            "grow with k (position " + std::to_string(k + 1) + ")");
    exactly.push_back(atLeast[k] - next);
  }
  r.acceptLengths = lengthsFromHistogram(exactly);
  r.stepOrderKnown = false;
}

}  // namespace

// vLLM's offline LLM.generate() RequestOutput (vllm/outputs.py), one a line, as vars() with its
// nested objects as dicts; outputs[0].token_ids are the generated tokens. The counts come from
// the V1 engine's outputs[0].spec_decode_metrics when present, else from the V0 engine's
// metrics. request_id "N" (LLM.generate numbers its requests in prompt order) is prompt N.
void readVllm(ImportedRecords& records) {
  forEachJsonLine(records.file, [&](const json& j, const Where& where) {
    for (auto& f : unknownFields(j, {"request_id", "prompt", "prompt_token_ids", "prompt_logprobs", "outputs",
                                     "finished", "metrics", "lora_request", "encoder_prompt",
                                     "encoder_prompt_token_ids", "num_cached_tokens", "multi_modal_placeholders",
                                     "kv_transfer_params", "prompt_token_id_logprobs", "num_cache_creation_tokens",
                                     "ec_transfer_params"}))
      records.ignoredFields.push_back(f);
    ImportedResponse r;
    r.line = where.line;
    r.promptTokens = tokenList(j, "prompt_token_ids", where);
    if (const auto id = j.find("request_id"); id != j.end() && id->is_string() && !id->get<std::string>().empty() &&
                                              std::ranges::all_of(id->get<std::string>(), ::isdigit))
      r.promptId = std::stoll(id->get<std::string>());
    const auto outputs = j.find("outputs");
    if (outputs == j.end() || !outputs->is_array() || outputs->size() != 1 || !(*outputs)[0].is_object())
      where.fail("outputs", "expected exactly one completion (n=1) as an object");
    const json& output = (*outputs)[0];
    r.outputTokens = tokenList(output, "token_ids", where);
    if (const auto v1 = output.find("spec_decode_metrics"); v1 != output.end() && !v1->is_null()) {
      if (!v1->is_object()) where.fail("outputs[0].spec_decode_metrics", "expected an object");
      readVllmV1Counts(*v1, where, r);
    } else {
      readVllmV0Counts(j, where, records, r);
    }
    records.responses.push_back(std::move(r));
  });
}

// SGLang's native /generate response (sglang/srt/managers/tokenizer_manager.py): output_ids
// and meta_info, whose histogram [n] counts the request's verify steps that accepted exactly n
// drafts (spec_verify_ct their total). SGLang 0.5.21 renamed it spec_correct_drafts_histogram
// (and spec_accept_token_num / spec_draft_token_num to spec_num_correct_drafts /
// spec_num_proposed_drafts); 0.5.15-0.5.20 wrote both names, earlier releases the old ones.
// One response a line; the n-th is prompt n unless it carries "prompt_id" (SGLang's response
// has no prompt ids).
void readSglang(ImportedRecords& records) {
  constexpr const char* kHistogram = "spec_correct_drafts_histogram";
  constexpr const char* kOldHistogram = "spec_accept_histogram";
  std::int64_t index = 0;
  forEachJsonLine(records.file, [&](const json& j, const Where& where) {
    for (auto& f : unknownFields(j, {"text", "output_ids", "meta_info", "prompt_id", "index"}))
      records.ignoredFields.push_back(f);
    ImportedResponse r;
    r.line = where.line;
    r.promptId = j.contains("prompt_id") ? integerField(j, "prompt_id", where) : index;
    ++index;
    if (j.contains("output_ids")) r.outputTokens = tokenList(j, "output_ids", where);
    const auto meta = j.find("meta_info");
    if (meta == j.end() || !meta->is_object()) where.fail("meta_info", "missing");
    for (auto& f : unknownFields(*meta, {"id", "finish_reason", "prompt_tokens", "completion_tokens", "cached_tokens",
                                         "e2e_latency", "spec_verify_ct", "spec_accept_length", "spec_accept_rate",
                                         kHistogram, kOldHistogram, "spec_num_correct_drafts",
                                         "spec_num_proposed_drafts", "spec_accept_token_num", "spec_draft_token_num"},
                                 "meta_info."))
      records.ignoredFields.push_back(f);
    const bool renamed = meta->contains(kHistogram);
    if (!renamed && !meta->contains(kOldHistogram))
      where.fail(std::string("meta_info.") + kHistogram,
                 std::string("missing (nor the older ") + kOldHistogram + "): SGLang records it for speculative requests");
    const auto histogram = countList(*meta, renamed ? kHistogram : kOldHistogram, where, 0);
    if (renamed && meta->contains(kOldHistogram) && countList(*meta, kOldHistogram, where, 0) != histogram)
      where.invalid(std::string("meta_info.") + kOldHistogram, std::string("differs from ") + kHistogram);
    r.acceptLengths = lengthsFromHistogram(histogram);
    r.stepOrderKnown = false;
    if (meta->contains("spec_verify_ct") &&
        integerField(*meta, "spec_verify_ct", where) != static_cast<std::int64_t>(r.acceptLengths.size()))
      where.invalid("meta_info.spec_verify_ct", "differs from the steps of the accept histogram (" +
                                                    std::to_string(r.acceptLengths.size()) + ")");
    if (meta->contains("completion_tokens") && !r.outputTokens.empty() &&
        integerField(*meta, "completion_tokens", where) != static_cast<std::int64_t>(r.outputTokens.size()))
      where.invalid("meta_info.completion_tokens", "differs from the length of output_ids");
    records.responses.push_back(std::move(r));
  });
}

}  // namespace dfi::imports::detail
