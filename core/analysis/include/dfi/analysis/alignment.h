#pragma once
// Another pipeline's response aligned with the engine's reference on the same prompt (its live
// greedy run, which is the target's greedy continuation): the first step whose acceptance
// differs, the first generated token that differs, and a verdict a person can act on. An output
// that leaves the target's greedy is the target side's fault (cache rollback, kernels, dtype:
// the pipeline is not lossless); identical outputs with another acceptance are the drafter
// side's (its inputs, mask, positions or numerics differ).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::analysis {

// One response as the alignment sees it.
struct ResponseTrace {
  std::vector<session::TokenId> output;  // generated tokens, the prefill's first; empty: not recorded
  std::vector<int> acceptLengths;        // per verify step, tokens committed
  bool stepOrderKnown = true;            // false: acceptLengths is a multiset (a histogram)
};

// The trace of a recorded live response (steps in step order): the first step's anchor, then
// every step's accepted drafts and bonus, as many as the step counts.
ResponseTrace traceOfSteps(const std::vector<session::StepRecord>& steps);

enum class Verdict { Identical, DrafterSide, TargetSide };
const char* verdictName(Verdict verdict);  // "identical", "drafter-side", "target-side"

struct ResponseAlignment {
  session::PromptId prompt = 0;
  Verdict verdict = Verdict::Identical;
  // The first step whose acceptance length differs (or where one response has no more steps);
  // unknown when either side's step order is not recorded.
  std::optional<int> firstStep;
  bool acceptanceDiffers = false;
  // The first generated token (0: the one sampled at prefill) where the outputs differ.
  std::optional<std::int64_t> firstToken;
  // The other output equals the target's greedy continuation over their common length;
  // nullopt when the other pipeline recorded no output.
  std::optional<bool> lossless;
  std::int64_t referenceTokens = 0, importedTokens = 0;
  std::int64_t referenceSteps = 0, importedSteps = 0;

  std::string text() const;  // "outputs identical, acceptance differs from step 3", ...
};

ResponseAlignment alignResponse(session::PromptId prompt, const ResponseTrace& reference,
                                const ResponseTrace& imported);

// Over a run: how many prompts each verdict got and where the divergent ones diverge.
struct AlignmentSummary {
  std::int64_t prompts = 0;
  std::int64_t identical = 0, drafterSide = 0, targetSide = 0;
  std::map<int, std::int64_t> firstStepHistogram;            // first divergent step -> prompts
  std::map<std::int64_t, std::int64_t> firstTokenHistogram;  // first divergent token -> prompts
};
AlignmentSummary summarizeAlignment(const std::vector<ResponseAlignment>& responses);

// What an imported run's settings_json says of its alignment:
// {"import": {"reference_run": N, "step_order": "recorded" | "not recorded ..."}}.
inline constexpr std::string_view kImportSettings = "import";
inline constexpr std::string_view kImportReferenceRun = "reference_run";
inline constexpr std::string_view kImportStepOrder = "step_order";
inline constexpr std::string_view kStepOrderRecorded = "recorded";
struct ImportAlignment {
  session::RunId referenceRun = 0;
  bool stepOrderRecorded = true;  // false: per-request counts (vLLM, SGLang), no step to point at
};
// nullopt for a run of this engine or unreadable settings.
std::optional<ImportAlignment> importAlignment(const session::RunRecord& run);

}  // namespace dfi::analysis
