#pragma once
// The drafter's blocks at given anchors of a fixed token sequence, written to a .safetensors
// file: what `dflash-eval draft` does, as a torch-free API. For comparing the engine's drafter
// with another pipeline's (a training run's own drafter outputs, say) and for the train/eval
// parity check of one sequence.
//
// File contents (dtype = the compute dtype unless stated; <path> is "inference" or "training"):
//   input_ids                [T] I64
//   anchors                  [N] I64, in the order given
//   <path>.logits            [N, g, V]    draft i drafts position anchor+i+1 (g = B-1, or B for a
//                                         drafter sampling from the anchor); DSpark: before its bias
//   <path>.layer.<l>         [N, B, H]    block rows after drafter layer l (residual stream)
//   context.fc               [T, H]       fc(concatenated target taps) of every position
//   context.hidden_norm      [T, H]       hidden_norm of that: the drafter's context rows
//   parity.max_abs_diff      [N] F32      with both paths: per anchor, over slots and vocab
//   parity.argmax_agreement  [N] F32      fraction of slots whose greedy token agrees
//   parity.first_differing_slot [N] I64   -1 when every slot agrees
//   selector.draft_tokens    [N, B-1] I64    DFlash2 only: the candidate selector's greedy path
//   selector.candidates      [N, B-1, k] I64 (training path), each slot's top-k by logit,
//   selector.scores          [N, B-1, k] F32 their path scores,
//   selector.chosen          [N, B-1] I64    and the index chosen (0: the drafter's argmax)
//   dspark.draft_tokens      [N, g] I64      DSpark only: the heads' greedy chain (training path)
//   dspark.confidence        [N, g] F32      and the confidence head's output, when it has one
// Metadata: target, drafter, mask variants, dtype.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dfi/analysis/attention_mask.h"
#include "dfi/engine/model_options.h"

namespace dfi::engine {

enum class DraftPath { Inference, Training, Both };
// "inference", "training", "both"; throws dfi::UsageError otherwise.
DraftPath parseDraftPath(const std::string& text);

struct DraftPassRequest {
  std::filesystem::path target;
  std::filesystem::path drafter;
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> anchors;
  analysis::MaskVariant variant = analysis::MaskVariant::Reference;
  // The training path's mask when it differs from `variant`: parity of an inference run
  // against what a training pipeline computed (a reference-mask eval of a drafter trained
  // with the anchor-visible bug shows up as flagged anchors).
  std::optional<analysis::MaskVariant> trainingVariant;
  DraftPath path = DraftPath::Inference;
  std::optional<int> blockSize;
  ModelOptions model;
  std::filesystem::path out;
};

struct AnchorParity {
  std::int64_t anchor = 0;
  double maxAbsDiff = 0;
  double argmaxAgreement = 1;
  int firstDifferingSlot = -1;
  bool flagged = false;
};

struct DraftPassSummary {
  int blockSize = 0;
  int layers = 0;
  std::vector<AnchorParity> parity;  // with DraftPath::Both
};

// Throws dfi::Error subclasses: bad directories, incompatible drafter, anchors or ids out of
// range (naming the value and the valid range).
DraftPassSummary runDraftPass(const DraftPassRequest& request);

}  // namespace dfi::engine
