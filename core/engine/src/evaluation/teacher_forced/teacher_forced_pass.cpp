#include "evaluation/teacher_forced/teacher_forced_pass.h"

#include <algorithm>
#include <optional>
#include <string>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "dfi/session/hidden_statistics.h"
#include "evaluation/teacher_forced/dflash_parity.h"
#include "evaluation/teacher_forced/hidden_stats.h"
#include "models/dspark_heads.h"

namespace dfi::engine {
namespace {

namespace hs = session::hidden_statistics;

session::StatisticRecord single(std::string name, float value) {
  session::StatisticRecord r;
  r.name = std::move(name);
  r.values = {value};
  return r;
}

void append(std::vector<session::StatisticRecord>& to, std::vector<session::StatisticRecord> records) {
  to.insert(to.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
}

// The context rows a block adds over the previous (smaller) anchor of the pass: positions
// [previous anchor, anchor), or [0, anchor) for the first. Over all steps these partition
// the sequence, so every position's statistics are recorded once, at the step that first
// sees it -- as the live loop's context cache grows.
std::int64_t previousAnchor(std::span<const std::int64_t> anchors, std::int64_t anchor) {
  std::int64_t previous = 0;
  for (std::int64_t a : anchors)
    if (a < anchor) previous = std::max(previous, a);
  return previous;
}

}  // namespace

TeacherForcedPass runTeacherForcedPass(const SequenceFeatures& sequence, const DFlashDrafter& drafter,
                                       std::span<const std::int64_t> anchors, analysis::MaskVariant variant,
                                       const TeacherForcedPassOptions& options) {
  c10::InferenceMode inference;
  TeacherForcedPass pass;
  DrafterProbes probes{.wantLayerOutputs = options.hiddenStatistics, .wantContext = options.hiddenStatistics};
  std::vector<BlockParity> parity;
  DrafterKvCache inferenceCache = drafter.newCache();
  // Parity forward by forward: the inference path drafts the same anchors one block at a
  // time and the two logit sets are compared while the training path's are at hand.
  auto compare = [&](std::size_t first, const at::Tensor& training, const at::Tensor&) {
    const auto part = anchors.subspan(first, static_cast<std::size_t>(training.size(0)));
    const at::Tensor inference =
        inferencePathLogits(drafter, sequence.features, sequence.ids, part, variant, nullptr, &inferenceCache);
    const std::vector<BlockParity> chunk = compareDraftPaths(inference, training);
    parity.insert(parity.end(), chunk.begin(), chunk.end());
  };
  // A Markov drafter's trees, forward by forward, while its block states are at hand.
  const std::optional<DsparkHeads> heads = drafter.dsparkHeads();
  const bool trees = options.treeBudget > 0 && heads && drafter.config().dspark->markovRank > 0;
  auto grow = [&](std::size_t first, const at::Tensor& logits, const at::Tensor& blockStates) {
    const std::int64_t* ids = sequence.ids.data_ptr<std::int64_t>();
    for (std::int64_t j = 0; j < logits.size(0); ++j)
      pass.trees.push_back(heads->tree(blockStates[j], logits[j], ids[anchors[first + static_cast<std::size_t>(j)]],
                                       options.topK, options.treeBudget));
  };
  auto alsoSee = [&](std::size_t first, const at::Tensor& logits, const at::Tensor& blockStates) {
    if (options.parity) compare(first, logits, blockStates);
    if (trees) grow(first, logits, blockStates);
  };
  pass.steps = teacherForcedSteps(sequence, drafter, anchors, variant, options.topK,
                                  options.parity || trees ? DFlashDrafter::ChunkLogitsSink(alsoSee) : nullptr,
                                  options.hiddenStatistics ? &probes : nullptr);
  pass.statistics.resize(pass.steps.size());
  if (anchors.empty()) return pass;

  for (std::size_t j = 0; j < parity.size(); ++j) {
    auto& out = pass.statistics[j];
    out.push_back(single(std::string(analysis::kParityMaxAbsDiff), static_cast<float>(parity[j].maxAbsDiff)));
    out.push_back(single(std::string(analysis::kParityArgmaxAgreement), static_cast<float>(parity[j].argmaxAgreement)));
    out.push_back(single(std::string(analysis::kParityFirstDifferingSlot), static_cast<float>(parity[j].firstDifferingSlot)));
    if (parity[j].flagged) pass.parityFlaggedAnchors.push_back(anchors[j]);
  }

  if (options.hiddenStatistics) {
    const int b = drafter.blockSize();
    const auto& taps = drafter.config().targetLayerIds;
    for (std::size_t j = 0; j < anchors.size(); ++j) {
      const std::int64_t from = previousAnchor(anchors, anchors[j]), count = anchors[j] - from;
      auto& out = pass.statistics[j];
      for (std::size_t i = 0; i < taps.size(); ++i) {
        append(out, hiddenStatisticRecords(sequence.taps[i].narrow(0, from, count), hs::kTargetTap, taps[i]));
        if (i < sequence.routing.size() && sequence.routing[i].experts.defined())
          append(out, routingRecords(sequence.routing[i], from, count, taps[i]));
      }
      append(out, hiddenStatisticRecords(probes.fcOutput.narrow(0, from, count), hs::kDrafterFc));
      append(out, hiddenStatisticRecords(probes.hiddenNormOutput.narrow(0, from, count), hs::kDrafterHiddenNorm));
      for (std::size_t l = 0; l < probes.layerOutputs.size(); ++l)
        append(out, hiddenStatisticRecords(probes.layerOutputs[l].narrow(0, static_cast<std::int64_t>(j) * b, b),
                                           hs::kDrafterLayer, static_cast<int>(l)));
    }
  }
  return pass;
}

}  // namespace dfi::engine
