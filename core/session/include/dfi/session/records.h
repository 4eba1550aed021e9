#pragma once
// The one record format: what the engine fills, what the session file stores, what the
// protocol streams and what the GUI reads. Plain value types keyed by stable ids (run, prompt,
// step, slot, layer, head, position, token id), so comparing two runs is a join on those ids.
// Ids a writer assigns (run, step, tensor, annotation) are 0 until the record is written.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dfi::session {

using RunId = std::int64_t;
using PromptId = std::int64_t;  // the prompt's stable index in its prompt set (JSONL line)
using StepId = std::int64_t;    // unique in a file, increasing in write order
using TensorId = std::int64_t;
using AnnotationId = std::int64_t;
using TokenId = std::int32_t;

// A checkpoint as loaded: where it came from and what it was, so a result can be traced.
struct ModelIdentity {
  std::string path;
  std::string configJson;     // config.json verbatim
  std::string weightsSha256;  // SHA-256 (hex) over the safetensors headers
};

// How a run drafted its blocks: one enum for the engine, the file, the stream and the GUI.
enum class EvaluationMode : std::int32_t { Live = 0, TeacherForced = 1, DDTree = 2 };

// The drafter's attention-mask variant (analysis/attention_mask.h has the rules): `reference`
// is the published mask, the others are the known train/eval mismatches.
enum class MaskVariant : std::int32_t {
  Reference,         // context k < anchor, own block bidirectional
  AnchorVisible,     // context k <= anchor: the anchor's feature is seen twice (user story)
  BlockCausal,       // own block causal (slot k sees slots <= k) instead of bidirectional
  PositionsPlusOne,  // same mask, block slot k placed at anchor + k + 1
  NoContext,         // the block sees only itself
};
inline constexpr MaskVariant kAllMaskVariants[] = {MaskVariant::Reference, MaskVariant::AnchorVisible,
                                                   MaskVariant::BlockCausal, MaskVariant::PositionsPlusOne,
                                                   MaskVariant::NoContext};

struct RunRecord {
  RunId runId = 0;
  std::string name;
  ModelIdentity target;
  ModelIdentity drafter;
  std::string engineVersion;
  std::string device;  // "cuda:0 (NVIDIA H200)", "cpu"
  std::string dtype;   // "bfloat16", ...
  EvaluationMode mode = EvaluationMode::Live;
  MaskVariant maskVariant = MaskVariant::Reference;  // the mask the drafter ran with
  std::int32_t blockSize = 0;      // B: anchor + B-1 draft slots
  std::int32_t slidingWindow = 0;  // W of the drafter's sliding-attention layers; 0: none
  std::int32_t topK = 0;           // k of the per-slot top-k tables of this run's steps
  double temperature = 0;          // the live loop's sampling temperature; 0: greedy
  std::int32_t sample = 0;         // repeat of a sampled evaluation (--samples N): 0..N-1
  // `dflash-eval diagnose`: "baseline" for the diagnosis's reference run (its settings hold the
  // lint findings and the battery), the hypothesis's name ("taps-shift:-1") for each variant
  // run; empty for every other run.
  std::string hypothesis;
  // Where the steps come from: empty when this engine recorded them, else the importer's
  // description of the other pipeline ("vllm 0.11 per-request metrics: FILE"; `dflash-eval import`).
  std::string origin;
  std::string settingsJson;    // every setting of the run, as JSON
  std::string shard;           // "i/N" when recorded with --shard, else empty
  double startedAt = 0;        // Unix seconds
  double finishedAt = 0;       // 0 while running
  std::string timingsJson;     // prefill/draft/verify totals, as JSON
};

struct PromptRecord {
  RunId runId = 0;
  PromptId promptId = 0;
  std::string dataset;
  std::int32_t turn = 0;
  std::string text;                   // the prompt after its chat template
  std::vector<TokenId> promptTokens;  // its token ids
  std::int32_t completionTokens = 0;  // generated tokens, the one sampled at prefill included
};

// One verify step: the anchor, the drafter's block and what the target said about it.
struct StepRecord {
  StepId stepId = 0;
  RunId runId = 0;
  PromptId promptId = 0;
  std::int32_t stepIndex = 0;  // 0-based position of the step within its response
  EvaluationMode mode = EvaluationMode::Live;
  std::int64_t anchorPosition = 0;  // sequence position of the anchor token
  TokenId anchorToken = 0;
  std::vector<TokenId> draftTokens;   // B-1 slots: slot i drafts position anchorPosition+i+1
  std::vector<TokenId> targetTokens;  // the target's token at each slot's position
  std::int32_t acceptedCount = 0;     // leading slots equal to the target (0..B-1)
  TokenId bonusToken = 0;
  std::vector<TokenId> topKIds;     // slots x k, row-major (k = RunRecord::topK)
  std::vector<float> topKProbs;     // slots x k, same order as topKIds
  std::vector<std::uint8_t> garbleFlags;  // per slot, dfi::analysis::GarbleFlag bits, or empty
  std::string maskVariant;                // attention-mask variant the drafter ran with
  // Tokens the step counts when the reference's convention cut it: within the token budget and
  // up to the first stop token (dflash 0.1.0); 0: not cut, acceptedCount + 1.
  std::int32_t countedLength = 0;
  // Sampled live steps, per drafted slot (empty when greedy): the target's (p) and the
  // drafter's (q) probability of the slot's draft under the sampling rule, and the uniform u of
  // its acceptance test: the slot is accepted while u * q < p.
  std::vector<float> targetProbs;
  std::vector<float> draftProbs;
  std::vector<float> acceptUniforms;
  // DFlash2 drafters, per drafted slot (empty otherwise): the candidate selector's top
  // selector_top_k tokens of the slot's logits, their path scores, and the index of the one it
  // chose (its draft), slots x k row-major; where the chosen one is not the most probable
  // candidate, the selector changed the drafter's argmax.
  std::vector<TokenId> candidateIds;
  std::vector<float> candidateScores;
  std::vector<std::int32_t> chosenCandidates;
  // DSpark drafters with a confidence head, per drafted slot (empty otherwise): the head's
  // predicted acceptance rate of the slot, in (0, 1).
  std::vector<float> draftConfidence;
  // Teacher-forced steps, per drafted slot whose target token is known: the chance that
  // speculative sampling at temperature 1 accepts the slot's draft after the true text,
  // sum_v min(p_v, q_v) = 1 - TV(p, q) of the target's (p) and the drafter's (q) distributions
  // over the target's vocabulary (speculators' accept_rate; its accept_len is 1 plus the sum of
  // their running products over a block).
  std::vector<float> slotOverlap;
  // A reduced draft vocabulary (speculators' d2t), per drafted slot: the draft's id in the
  // drafter's own vocabulary, draft_tokens holding its target id (-1 where no draft); empty
  // for a drafter that drafts in the target's vocabulary.
  std::vector<TokenId> draftVocabIds;

  // The step's acceptance length: its accepted drafts and the bonus, as counted.
  std::int32_t acceptLength() const { return countedLength > 0 ? countedLength : acceptedCount + 1; }
  bool operator==(const StepRecord&) const = default;
};

// The few numbers of a step that lists and summaries need (the GUI's navigator and compare
// view), read without its token arrays so that scanning 200k steps stays cheap.
struct StepSummary {
  StepId stepId = 0;
  RunId runId = 0;
  PromptId promptId = 0;
  std::int32_t stepIndex = 0;
  EvaluationMode mode = EvaluationMode::Live;
  std::int64_t anchorPosition = 0;
  std::int32_t draftSlots = 0;     // B-1
  std::int32_t acceptedCount = 0;
  std::int32_t garbledSlots = 0;   // slots with any garble flag set
  std::int32_t countedLength = 0;  // StepRecord::countedLength
  // Garble flags (dfi/analysis/garble.h bits) ORed over the slots the verifier looked at, the
  // draft chain's accepted slots and its first mismatch (what the drafter proposes), and over
  // the rest, which nothing used; and how many of the former are flagged.
  std::uint8_t proposedGarble = 0;
  std::uint8_t tailGarble = 0;
  std::int32_t proposedGarbledSlots = 0;

  std::int32_t acceptLength() const { return countedLength > 0 ? countedLength : acceptedCount + 1; }
  bool operator==(const StepSummary&) const = default;
};

StepSummary summarize(const StepRecord& step);

// How many leading slots of a step's draft chain (the drafter's top-1 per slot) equal the
// target's tokens. For a live or teacher-forced step that is the recorded acceptedCount; a
// DDTree step records the tree's count instead, and its target tokens (the target's greedy
// token at every slot) give the chain's own.
std::int32_t chainAcceptedCount(EvaluationMode mode, std::int32_t acceptedCount, std::span<const TokenId> draftTokens,
                                std::span<const TokenId> targetTokens);
inline std::int32_t chainAcceptedCount(const StepRecord& step) {
  return chainAcceptedCount(step.mode, step.acceptedCount, step.draftTokens, step.targetTokens);
}

// Fills the summary's garble counts from the step's per-slot flags, split at the chain's first
// mismatch (slot `chainAccepted`).
void summarizeGarble(StepSummary& step, std::span<const std::uint8_t> slotFlags, std::int32_t chainAccepted);

// A DDTree verified at one step. Node 0 is the root (the anchor); parents[0] = -1.
struct TreeRecord {
  StepId stepId = 0;
  std::vector<TokenId> nodeTokens;
  std::vector<float> nodeLogProbs;        // log w(path) of each node under the draft
  std::vector<std::int32_t> parents;      // index of each node's parent
  std::vector<std::int32_t> acceptedPath; // node indices from the root, root included
  bool operator==(const TreeRecord&) const = default;
};

// A named statistic (hidden-state norm, attention entropy, ...) at a layer/head, either one
// value or one per position/slot. stepId 0 means a run-level statistic; -1 means "not per
// layer/head".
struct StatisticRecord {
  RunId runId = 0;
  StepId stepId = 0;
  std::string name;
  std::int32_t layer = -1;
  std::int32_t head = -1;
  std::vector<float> values;
  bool operator==(const StatisticRecord&) const = default;
};

enum class TensorDType : std::int32_t { F32 = 0, F16 = 1, BF16 = 2, U8 = 3, I32 = 4 };
std::size_t tensorDTypeSize(TensorDType dtype);

// Describes a stored tensor; its bytes are fetched separately (Reader::readTensor).
struct TensorInfo {
  TensorId tensorId = 0;
  RunId runId = 0;
  StepId stepId = 0;  // 0 when not tied to a step
  std::string name;   // hook path: "target.layers.3.attn.probs", "drafter.mask"
  std::int32_t layer = -1;
  std::int32_t head = -1;
  TensorDType dtype = TensorDType::F32;
  std::vector<std::int64_t> shape;
  std::string layout = "row_major";  // axis names or storage order, for the viewer
  std::int64_t tileBytes = 0;  // raw bytes per stored tile (set by the writer)
  bool operator==(const TensorInfo&) const = default;
};

// A tensor with its data: row-major bytes of shape x dtype, little-endian.
struct TensorRecord {
  TensorInfo info;
  std::vector<std::uint8_t> data;
};

// Lets a reader show tokens without a tokenizer.
struct TokenString {
  TokenId tokenId = 0;
  std::string raw;      // the token's bytes (may be a partial UTF-8 sequence)
  std::string display;  // printable form: "␣the", "\\n", "<0xE2>"
  bool operator==(const TokenString&) const = default;
};

enum class AnnotationKind : std::int32_t { Bookmark = 0, Note = 1, Layout = 2 };

struct Annotation {
  AnnotationId annotationId = 0;
  RunId runId = 0;    // 0: session-wide
  StepId stepId = 0;  // 0: not tied to a step
  AnnotationKind kind = AnnotationKind::Note;
  std::string body;   // note text, bookmark label, or view layout JSON
  double createdAt = 0;
};

}  // namespace dfi::session
