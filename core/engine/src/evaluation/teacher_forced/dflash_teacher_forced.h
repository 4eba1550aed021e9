#pragma once
// Teacher-forced DFlash steps over a fixed token sequence (docs/dflash.md 4): one target forward
// gives the features of every position and the target's own greedy prediction for the next
// one; one drafter forward drafts a block at every anchor (training anchor-block mask). With
// the reference mask this reproduces, anchor for anchor, what the live loop would draft and
// accept on the same sequence, at a fraction of the cost.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dfi/analysis/attention_mask.h"
#include "dfi/session/records.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"

namespace dfi::engine {

// Target tokens of slots whose position lies past the sequence are unknown; they are recorded
// as kUnknownToken and end the accepted run there.
inline constexpr session::TokenId kUnknownToken = -1;

// What one target forward over a fixed sequence gives the drafter.
struct SequenceFeatures {
  at::Tensor ids;          // [T] int64, CPU
  std::vector<at::Tensor> taps;  // per target_layer_ids entry: [T, Ht] (on the layer's device)
  at::Tensor features;     // the taps side by side: [T, F*Ht]
  at::Tensor predictions;  // [T] int64, CPU: the target's greedy token after each position
  // Per target_layer_ids entry: the router's choice, [T, k] (undefined tensors for a dense layer).
  std::vector<ExpertRouting> routing;
  // The target's whole distribution where its argmax is not enough (the slots' overlap): its
  // final-normed hidden state at each position, [T, H], and its LM head over rows of them.
  // Undefined / empty when the forward predicted nothing, or for a caller that wants acceptance
  // alone.
  at::Tensor finalHidden;
  std::function<at::Tensor(const at::Tensor&)> lmHead;
};

// The target's forward over `sequence`: its taps for the drafter, and its predictions from
// position `predictFrom` on (kUnknownToken before it; `sequence.size()`: no LM head at all,
// for a caller that brings its own predictions).
SequenceFeatures sequenceFeatures(const TargetModel& target, const DFlashDrafter& drafter,
                                  std::span<const std::int64_t> sequence, std::int64_t predictFrom = 0);

// One TeacherForced record per anchor (anchors in [0, T)), with the per-slot top-k of the
// draft distribution when topK > 0, and each slot's overlap with the target's distribution
// (StepRecord::slotOverlap) where `sequence` carries the target's LM head. `alsoSee`, if given, gets each drafter forward's logits
// (DFlashDrafter::teacherForcedChunks) after their records are made; `probes` the drafter's
// intermediate tensors.
std::vector<session::StepRecord> teacherForcedSteps(const SequenceFeatures& sequence, const DFlashDrafter& drafter,
                                                    std::span<const std::int64_t> anchors,
                                                    analysis::MaskVariant variant, int topK,
                                                    const DFlashDrafter::ChunkLogitsSink& alsoSee = {},
                                                    DrafterProbes* probes = nullptr);

// Teacher-forced records for acceptance alone, as the diagnosis's hypotheses need them: each
// step's drafts up to and including its first rejected slot, kUnknownToken after it, no top-k
// (DFlashDrafter::draftsUntilRejected). Accepted counts and bonus tokens are
// teacherForcedSteps()'s. A DFlash2 drafter, whose slots cannot be cut, records every draft.
std::vector<session::StepRecord> stepsUntilRejected(const SequenceFeatures& sequence, const DFlashDrafter& drafter,
                                                    std::span<const std::int64_t> anchors,
                                                    analysis::MaskVariant variant);
// The same for several feature sets of the sequence (`sequence`'s ids and predictions; the
// diagnosis's tap hypotheses), in one drafter forward: the steps of each set.
std::vector<std::vector<session::StepRecord>> stepsUntilRejected(const SequenceFeatures& sequence,
                                                                 std::span<const at::Tensor> featureSets,
                                                                 const DFlashDrafter& drafter,
                                                                 std::span<const std::int64_t> anchors,
                                                                 analysis::MaskVariant variant);

// Both stages at once.
std::vector<session::StepRecord> teacherForcedSteps(
    const TargetModel& target, const DFlashDrafter& drafter, std::span<const std::int64_t> sequence,
    std::span<const std::int64_t> anchors,
    analysis::MaskVariant variant = analysis::MaskVariant::Reference, int topK = 0);

}  // namespace dfi::engine
