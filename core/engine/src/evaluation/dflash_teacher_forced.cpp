#include "evaluation/dflash_teacher_forced.h"

#include <string>

#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include "evaluation/dflash_decode.h"
#include "evaluation/draft_distribution.h"
#include "kernels/argmax.h"
#include "dfi/session/record_fields.h"

namespace dfi::engine {
namespace {

// Bounds the attention scores of one drafter forward: heads * 32*B * (T + 32*B) floats, about
// 170 MB for a 32-head, B=16 drafter on a 2048-token sequence.
constexpr std::int64_t kAnchorsPerForward = 32;

}  // namespace

SequenceFeatures sequenceFeatures(const TargetModel& target, const DFlashDrafter& drafter,
                                  std::span<const std::int64_t> sequence) {
  c10::InferenceMode inference;
  SequenceFeatures out;
  out.ids = at::tensor(std::vector<std::int64_t>(sequence.begin(), sequence.end()), at::kLong);
  const ForwardOutput full = target.forward(
      out.ids.view({1, -1}), nullptr, {.tapLayers = drafter.config().targetLayerIds, .routing = true, .logits = true});
  for (const at::Tensor& tap : full.taps) out.taps.push_back(tap[0]);
  for (const ExpertRouting& r : full.routing)
    out.routing.push_back(r.experts.defined() ? ExpertRouting{r.experts[0], r.weights[0]} : ExpertRouting{});
  out.features = concatenatedTaps(full.taps);
  // predictions[p]: the target's greedy token for position p+1 given positions 0..p.
  out.predictions = argmaxLastDim(full.logits[0]).to(at::kCPU).contiguous();
  return out;
}

std::vector<session::StepRecord> teacherForcedSteps(const TargetModel& target, const DFlashDrafter& drafter,
                                                    std::span<const std::int64_t> sequence,
                                                    std::span<const std::int64_t> anchors,
                                                    analysis::MaskVariant variant, int topK) {
  return teacherForcedSteps(sequenceFeatures(target, drafter, sequence), drafter, anchors, variant, topK);
}

std::vector<session::StepRecord> teacherForcedSteps(const SequenceFeatures& sequence, const DFlashDrafter& drafter,
                                                    std::span<const std::int64_t> anchors,
                                                    analysis::MaskVariant variant, int topK,
                                                    const DFlashDrafter::ChunkLogitsSink& alsoSee,
                                                    DrafterProbes* probes) {
  c10::InferenceMode inference;
  const int b = drafter.blockSize();
  const std::int64_t length = sequence.ids.size(0);
  // Host copies read through pointers: a per-element item() is a dispatcher round trip each.
  const at::Tensor predictions = sequence.predictions.to(at::kLong).contiguous();
  const at::Tensor ids = sequence.ids.to(at::kLong).contiguous();
  const std::int64_t* predicted = predictions.data_ptr<std::int64_t>();
  const std::string variantName(enumName(variant));

  std::vector<session::StepRecord> steps;
  steps.reserve(anchors.size());
  const std::optional<CandidateSelector> selector = drafter.selector();
  auto record = [&](std::size_t first, const at::Tensor& logits, const at::Tensor& slotStates) {  // [n, B-1, V]
    const at::Tensor drafts = argmaxLastDim(logits).to(at::kCPU, at::kLong).contiguous();
    const std::int64_t* draft = drafts.data_ptr<std::int64_t>();
    // One top-k over the forward's slots: [n, B-1, k] row-major, anchor-major.
    std::vector<session::TokenId> topIds;
    std::vector<float> topProbs;
    if (topK > 0) fillTopK(logits, topK, topIds, topProbs);
    const auto perAnchor = static_cast<std::ptrdiff_t>(b - 1) * topK;
    for (std::int64_t j = 0; j < logits.size(0); ++j) {
      const std::int64_t anchor = anchors[first + static_cast<std::size_t>(j)];
      // The target's token for slot i's position (anchor+i+1), if the sequence reaches it.
      auto targetToken = [&](int slot) -> session::TokenId {
        const std::int64_t p = anchor + slot;
        return p < length ? static_cast<session::TokenId>(predicted[p]) : kUnknownToken;
      };
      session::StepRecord step;
      step.stepIndex = static_cast<std::int32_t>(steps.size());
      step.mode = session::EvaluationMode::TeacherForced;
      step.anchorPosition = anchor;
      step.anchorToken = static_cast<session::TokenId>(ids.data_ptr<std::int64_t>()[anchor]);
      for (int i = 0; i < b - 1; ++i) {
        step.draftTokens.push_back(static_cast<session::TokenId>(draft[j * (b - 1) + i]));
        step.targetTokens.push_back(targetToken(i));
      }
      // DFlash2: the drafts are the selector's greedy path from the anchor, not the argmax.
      if (selector) recordSelection(selector->select(slotStates[j], logits[j], step.anchorToken), step);
      while (step.acceptedCount < b - 1 &&
             step.targetTokens[static_cast<std::size_t>(step.acceptedCount)] != kUnknownToken &&
             step.draftTokens[static_cast<std::size_t>(step.acceptedCount)] ==
                 step.targetTokens[static_cast<std::size_t>(step.acceptedCount)])
        ++step.acceptedCount;
      step.bonusToken = targetToken(step.acceptedCount);
      step.maskVariant = variantName;
      if (topK > 0) {
        const auto from = static_cast<std::ptrdiff_t>(j) * perAnchor;
        step.topKIds.assign(topIds.begin() + from, topIds.begin() + from + perAnchor);
        step.topKProbs.assign(topProbs.begin() + from, topProbs.begin() + from + perAnchor);
      }
      steps.push_back(std::move(step));
    }
    if (alsoSee) alsoSee(first, logits, slotStates);
  };
  drafter.teacherForcedChunks(sequence.features, sequence.ids, anchors, variant, kAnchorsPerForward, record, probes);
  return steps;
}

}  // namespace dfi::engine
