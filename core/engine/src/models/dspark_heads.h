#pragma once
// DSpark's heads (speculators 0.9.0's DSparkDraftModel, models/dspark/model_definitions.py):
// after the backbone's logits, the Markov head adds to each drafted slot a low-rank bias
// conditioned on the token before it in the block (the anchor for the first draft, else the
// previous draft), so the block is drafted slot by slot; the confidence head predicts each
// slot's acceptance rate (trained on 1 - TV between draft and target distributions) from the
// slot's final-normed state, with the previous token's W1 embedding when configured.
//
// Head types: vanilla bias = W2 W1[prev]; gated bias = W2 (sigmoid(G [h; W1[prev]]) * W1[prev]);
// rnn keeps a state s over the block rows, s = g*s + (1-g)*tanh(c), bias = W2 tanh(o) with
// [g; c; o] = J [s; W1[prev]; h]. speculators' rnn steps over every row, the anchor's included
// when the anchor's slot does not draft (its previous token is then the anchor, as the package's
// training shift makes it); SpecForge's starts at the first drafted slot
// (DsparkConfig::rnnStepsOverAnchorRow).

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/analysis/ddtree.h"
#include "dfi/engine/sampling.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/session/records.h"
#include "models/dflash_weights.h"

namespace dfi::engine {

struct DsparkPath {
  std::vector<std::int64_t> tokens;  // the draft of each drafted slot
  at::Tensor logits;                 // [g, Vt]: the biased logits each draft was chosen from
  std::vector<float> confidence;     // per drafted slot, in (0, 1); empty without a confidence head
};

class DsparkHeads {
 public:
  DsparkHeads(const DsparkWeights& weights, const modelspec::DsparkConfig& config, const DraftVocabulary* vocabulary)
      : w_(weights), config_(config), vocabulary_(vocabulary) {}

  // Picks a slot's draft from its biased logits [Vt].
  using Chooser = std::function<std::int64_t(const at::Tensor& biasedLogits)>;
  static Chooser greedy();
  // A draw from the sampling rule's distribution with the stream's next token uniform.
  static Chooser sampled(const SamplingOptions& sampling, SamplingStream& stream);

  // `blockStates` [b, H]: the final-normed states of every row of the block (row 0 the
  // anchor's); `logits` [g, Vt]: the backbone's logits of the drafted rows, the last g of them
  // (g = b from the anchor, b - 1 otherwise). Each slot's previous token is the draft before it,
  // as served, or, where `text` gives one (>= 0), the text's token at that position: teacher
  // forcing as the package trains, every slot drafting after the true prefix.
  DsparkPath run(const at::Tensor& blockStates, const at::Tensor& logits, std::int64_t anchorToken,
                 const Chooser& choose, std::span<const std::int64_t> text = {}) const;

  // DDTree-`budget` over the block (its inputs as run's): DDTree's best-first construction with
  // each node's children the top-k of the next slot's logits biased after that node's token,
  // the rnn state carried along the node's path. No published code builds a DSpark tree: with a
  // bias that does not depend on the path this is DDTree itself (analysis::buildDDTree), and the
  // greedy chain run() drafts is its first branch.
  analysis::DDTree tree(const at::Tensor& blockStates, const at::Tensor& logits, std::int64_t anchorToken, int k,
                        int budget) const;

 private:
  // One row of the heads: its Markov bias after `previous` (undefined without a Markov head), the
  // rnn state after the row (the one given, for the other heads), the confidence head's input.
  struct Row {
    at::Tensor bias, rnnState, confidenceFeature;
  };
  Row row(const at::Tensor& h, std::int64_t previous, const at::Tensor& rnnState) const;
  at::Tensor biased(const at::Tensor& logits, const Row& row) const;  // a slot's logits [Vt] plus the bias
  // A block's states in the heads' dtype and device, its first drafting row, the rnn's start.
  struct Block {
    at::Tensor states;
    std::int64_t first = 0;
    at::Tensor rnnStart;
  };
  Block block(const at::Tensor& blockStates, const at::Tensor& logits) const;
  bool stepsOverAnchorRow() const;  // the rnn steps over the anchor's row before the first draft

  const DsparkWeights& w_;
  modelspec::DsparkConfig config_;
  const DraftVocabulary* vocabulary_;  // null for the full vocabulary
};

// The path into a step's record: the drafts and the confidence of each.
void recordDsparkPath(const DsparkPath& path, session::StepRecord& step);

}  // namespace dfi::engine
