#pragma once
// DFlash2's candidate selector (dflash 0.1.0's CandidateSelector): per drafted slot, the top
// selector_top_k tokens of the slot's logits are rescored by how well each follows the token
// chosen at the previous slot (low-rank predecessor/successor codebooks, gated by the slot's
// hidden state), and one is chosen, slot by slot from the anchor: the argmax, or a draw from
// the softmax of the scores at the sampling temperature. The drafts are the chosen path.

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/engine/sampling.h"
#include "dfi/session/records.h"
#include "models/dflash_weights.h"

namespace dfi::engine {

struct SelectorPath {
  std::vector<std::int64_t> tokens;   // the draft of each slot
  std::vector<std::int32_t> chosen;   // its index among the slot's candidates
  at::Tensor candidates;              // [n, k] int64, each slot's top-k by logit, most probable first
  at::Tensor scores;                  // [n, k] float32: the path scores the choice was made on
  at::Tensor probs;                   // sampled only: [n, k] the distribution each choice was drawn from
};

// The path into a step's record: draft tokens, candidates, their scores and the choices.
void recordSelection(const SelectorPath& path, session::StepRecord& step);

class CandidateSelector {
 public:
  CandidateSelector(const SelectorWeights& weights, int topK) : w_(weights), topK_(topK) {}

  int topK() const { return topK_; }

  // states [n, H] (the drafter's final-normed rows of slots 1..n) and logits [n, V]; the
  // predecessor of slot 1 is the anchor. `stream` draws the choices when sampling is given.
  SelectorPath select(const at::Tensor& states, const at::Tensor& logits, std::int64_t anchorToken,
                      const SamplingOptions* sampling = nullptr, SamplingStream* stream = nullptr) const;

 private:
  const SelectorWeights& w_;
  int topK_;
};

}  // namespace dfi::engine
