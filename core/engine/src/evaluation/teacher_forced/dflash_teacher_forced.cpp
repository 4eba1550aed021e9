#include "evaluation/teacher_forced/dflash_teacher_forced.h"

#include <algorithm>
#include <string>

#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include "dfi/base/error.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/live/draft_distribution.h"
#include "kernels/argmax.h"
#include "dfi/session/record_fields.h"

namespace dfi::engine {
namespace {

// Bounds the attention scores of one drafter forward: heads * 32*B * (T + 32*B) floats, about
// 170 MB for a 32-head, B=16 drafter on a 2048-token sequence.
constexpr std::int64_t kAnchorsPerForward = 32;

// One step's tokens from a sequence: its drafts (B-1, or B from the anchor), the target's token
// for each (kUnknownToken past the sequence), the accepted run and the bonus token.
class StepMaker {
 public:
  StepMaker(const SequenceFeatures& sequence, analysis::MaskVariant variant, int drafts)
      : predictions_(sequence.predictions.to(at::kLong).contiguous()),
        ids_(sequence.ids.to(at::kLong).contiguous()),
        length_(sequence.ids.size(0)),
        variant_(enumName(variant)),
        slots_(drafts) {}

  // The text's tokens at positions anchor+1 .. anchor+n, -1 past the sequence.
  std::vector<std::int64_t> textAfter(std::int64_t anchor, int n) const {
    std::vector<std::int64_t> out;
    for (std::int64_t p = anchor + 1; p <= anchor + n; ++p) out.push_back(p < length_ ? ids_.data_ptr<std::int64_t>()[p] : -1);
    return out;
  }

  // The target's token for slot i's position (anchor+i+1), if the sequence reaches it.
  session::TokenId target(std::int64_t anchor, int slot) const {
    const std::int64_t p = anchor + slot;
    // Host copies read through pointers: a per-element item() is a dispatcher round trip each.
    return p < length_ ? static_cast<session::TokenId>(predictions_.data_ptr<std::int64_t>()[p]) : kUnknownToken;
  }

  session::StepRecord operator()(std::int32_t index, std::int64_t anchor, const std::int64_t* drafts) const {
    session::StepRecord step;
    step.stepIndex = index;
    step.mode = session::EvaluationMode::TeacherForced;
    step.anchorPosition = anchor;
    step.anchorToken = static_cast<session::TokenId>(ids_.data_ptr<std::int64_t>()[anchor]);
    for (int i = 0; i < slots_; ++i) {
      step.draftTokens.push_back(static_cast<session::TokenId>(drafts[i]));
      step.targetTokens.push_back(target(anchor, i));
    }
    step.maskVariant = variant_;
    return step;
  }

  // The leading slots of a step whose target token is known (the target predicted their
  // position).
  int knownSlots(std::int64_t anchor) const {
    int n = 0;
    while (n < slots_ && target(anchor, n) != kUnknownToken) ++n;
    return n;
  }

  // After the drafts are final (DFlash2's selector and DSpark's heads may replace them).
  void accept(session::StepRecord& step) const {
    const auto slots = static_cast<std::size_t>(slots_);
    auto& n = step.acceptedCount;
    while (static_cast<std::size_t>(n) < slots && step.targetTokens[static_cast<std::size_t>(n)] != kUnknownToken &&
           step.draftTokens[static_cast<std::size_t>(n)] == step.targetTokens[static_cast<std::size_t>(n)])
      ++n;
    step.bonusToken = target(step.anchorPosition, n);
  }

 private:
  at::Tensor predictions_, ids_;
  std::int64_t length_;
  std::string variant_;
  int slots_;
};

}  // namespace

SequenceFeatures sequenceFeatures(const TargetModel& target, const DFlashDrafter& drafter,
                                  std::span<const std::int64_t> sequence, std::int64_t predictFrom) {
  c10::InferenceMode inference;
  const auto length = static_cast<std::int64_t>(sequence.size());
  if (predictFrom < 0 || predictFrom > length)
    throw UsageError("predictions from position " + std::to_string(predictFrom) + " of a sequence of " +
                     std::to_string(length));
  SequenceFeatures out;
  out.ids = at::tensor(std::vector<std::int64_t>(sequence.begin(), sequence.end()), at::kLong);
  const ForwardOutput full = target.forward(out.ids.view({1, -1}), nullptr,
                                            {.tapLayers = drafter.config().targetLayerIds,
                                             .routing = true,
                                             .logits = predictFrom < length,
                                             .logitsToKeep = length - predictFrom});
  for (const at::Tensor& tap : full.taps) out.taps.push_back(tap[0]);
  for (const ExpertRouting& r : full.routing)
    out.routing.push_back(r.experts.defined() ? ExpertRouting{r.experts[0], r.weights[0]} : ExpertRouting{});
  out.features = concatenatedTaps(full.taps);
  if (predictFrom < length) {
    out.finalHidden = full.finalHidden[0];
    out.lmHead = [&target](const at::Tensor& hidden) { return target.lmHead(hidden); };
  }
  // predictions[p]: the target's greedy token for position p+1 given positions 0..p.
  out.predictions = at::full({length}, static_cast<std::int64_t>(kUnknownToken), at::kLong);
  if (predictFrom < length)
    out.predictions.narrow(0, predictFrom, length - predictFrom).copy_(argmaxLastDim(full.logits[0]).to(at::kCPU));
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
  const int b = drafter.blockSize(), g = drafter.draftsPerBlock();
  const StepMaker make(sequence, variant, g);
  std::vector<session::StepRecord> steps;
  steps.reserve(anchors.size());
  const std::optional<CandidateSelector> selector = drafter.selector();
  const std::optional<DsparkHeads> dspark = drafter.dsparkHeads();
  // Each step's slots against the target's distribution at their positions: one LM head over
  // the chunk's rows. `draftRows[j]`: the distribution step `steps[from + j]` drafted from.
  auto recordOverlap = [&](std::size_t from, const std::vector<at::Tensor>& draftRows) {
    if (!sequence.lmHead) return;
    std::vector<std::int64_t> positions;
    std::vector<at::Tensor> drafted;
    for (std::size_t j = 0; j < draftRows.size(); ++j) {
      const std::int64_t anchor = steps[from + j].anchorPosition;
      const int known = make.knownSlots(anchor);
      for (int i = 0; i < known; ++i) positions.push_back(anchor + i);  // slot i's distribution
      drafted.push_back(draftRows[j].narrow(0, 0, known));
    }
    if (positions.empty()) return;
    const at::Tensor target = sequence.lmHead(sequence.finalHidden.index_select(
        0, at::tensor(positions, at::kLong).to(sequence.finalHidden.device())));
    // Anchor by anchor: two float32 copies of a block's rows, not of the chunk's.
    std::int64_t offset = 0;
    for (std::size_t j = 0; j < draftRows.size(); ++j) {
      const std::int64_t known = drafted[j].size(0);
      if (known == 0) continue;
      steps[from + j].slotOverlap =
          distributionOverlap(target.narrow(0, offset, known), drafted[j].to(target.device()));
      offset += known;
    }
  };
  // logits [n, g, V] of the drafted rows, blockStates [n, B, H] of every row.
  auto record = [&](std::size_t first, const at::Tensor& logits, const at::Tensor& blockStates) {
    const at::Tensor drafts = argmaxLastDim(logits).to(at::kCPU, at::kLong).contiguous();
    const std::int64_t* draft = drafts.data_ptr<std::int64_t>();
    // One top-k over the forward's slots: [n, g, k] row-major, anchor-major.
    std::vector<session::TokenId> topIds;
    std::vector<float> topProbs;
    if (topK > 0 && !dspark) fillTopK(logits, topK, topIds, topProbs);
    const auto perAnchor = static_cast<std::ptrdiff_t>(g) * topK;
    const std::size_t from = steps.size();
    std::vector<at::Tensor> draftRows;
    for (std::int64_t j = 0; j < logits.size(0); ++j) {
      session::StepRecord step = make(static_cast<std::int32_t>(steps.size()),
                                      anchors[first + static_cast<std::size_t>(j)], draft + j * g);
      // DFlash2: the drafts are the selector's greedy path from the anchor, not the argmax.
      if (selector)
        recordSelection(selector->select(blockStates[j].narrow(0, 1, b - 1), logits[j], step.anchorToken), step);
      // DSpark: each slot's Markov bias after the text's token before it, as the package trains
      // (every slot drafts after the true prefix, like the backbone's slots; up to the first
      // rejection these are the drafts, so the accepted run is serving's); its top-k is of the
      // biased logits.
      if (dspark) {
        const DsparkPath path = dspark->run(blockStates[j], logits[j], step.anchorToken, DsparkHeads::greedy(),
                                            make.textAfter(step.anchorPosition, g));
        recordDsparkPath(path, step);
        if (topK > 0) fillTopK(path.logits, topK, step.topKIds, step.topKProbs);
        draftRows.push_back(path.logits);
      } else {
        draftRows.push_back(logits[j]);  // DFlash2 too: its unary logits, as speculators' accept_len
      }
      make.accept(step);
      if (topK > 0 && !dspark) {
        const auto from = static_cast<std::ptrdiff_t>(j) * perAnchor;
        step.topKIds.assign(topIds.begin() + from, topIds.begin() + from + perAnchor);
        step.topKProbs.assign(topProbs.begin() + from, topProbs.begin() + from + perAnchor);
      }
      steps.push_back(std::move(step));
    }
    recordOverlap(from, draftRows);
    if (alsoSee) alsoSee(first, logits, blockStates);
  };
  drafter.teacherForcedChunks(sequence.features, sequence.ids, anchors, variant, kAnchorsPerForward, record, probes);
  return steps;
}

std::vector<std::vector<session::StepRecord>> stepsUntilRejected(const SequenceFeatures& sequence,
                                                                 std::span<const at::Tensor> featureSets,
                                                                 const DFlashDrafter& drafter,
                                                                 std::span<const std::int64_t> anchors,
                                                                 analysis::MaskVariant variant) {
  std::vector<std::vector<session::StepRecord>> perSet;
  if (!drafter.draftsStopAtRejection()) {
    for (const at::Tensor& features : featureSets) {
      SequenceFeatures set = sequence;
      set.features = features;
      set.lmHead = nullptr;  // acceptance alone: no overlap
      perSet.push_back(teacherForcedSteps(set, drafter, anchors, variant, 0));
    }
    return perSet;
  }
  c10::InferenceMode inference;
  const int b = drafter.blockSize();
  const StepMaker make(sequence, variant, b - 1);  // drafts of slots 1..B-1 (draftsStopAtRejection)
  const auto n = static_cast<std::int64_t>(anchors.size());
  at::Tensor expected = at::empty({n, b - 1}, at::kLong);
  for (std::int64_t j = 0; j < n; ++j)
    for (int i = 0; i < b - 1; ++i)
      expected.data_ptr<std::int64_t>()[j * (b - 1) + i] = make.target(anchors[static_cast<std::size_t>(j)], i);
  // Every set's blocks in one forward, within the keys one forward of kAnchorsPerForward blocks
  // has on a 2048-token sequence.
  const auto sets = static_cast<std::int64_t>(featureSets.size());
  const std::int64_t perForward =
      std::clamp<std::int64_t>(kAnchorsPerForward * (2048 + b) / (sets * (sequence.ids.size(0) + b)), 1, kAnchorsPerForward);
  const at::Tensor drafts = drafter.draftsUntilRejected(featureSets, sequence.ids, anchors, variant, expected, perForward);
  for (std::int64_t g = 0; g < sets; ++g) {
    std::vector<session::StepRecord>& steps = perSet.emplace_back();
    steps.reserve(anchors.size());
    for (std::int64_t j = 0; j < n; ++j) {
      session::StepRecord step = make(static_cast<std::int32_t>(j), anchors[static_cast<std::size_t>(j)],
                                      drafts.data_ptr<std::int64_t>() + (g * n + j) * (b - 1));
      make.accept(step);
      steps.push_back(std::move(step));
    }
  }
  return perSet;
}

std::vector<session::StepRecord> stepsUntilRejected(const SequenceFeatures& sequence, const DFlashDrafter& drafter,
                                                    std::span<const std::int64_t> anchors,
                                                    analysis::MaskVariant variant) {
  return std::move(stepsUntilRejected(sequence, std::span(&sequence.features, 1), drafter, anchors, variant).front());
}

}  // namespace dfi::engine
