#pragma once
// The arithmetic of sampled speculative decoding, as z-lab's dflash 0.1.0 does it
// (dflash/model.py: _sampling_probs, _rejection_sample): the probability rule of a sampled
// token, the lossless acceptance test of each drafted slot (accept while u * q < p) and the
// residual distribution max(0, p - q) a rejected slot is resampled from. Token draws take their
// uniform from a SamplingStream (inverse CDF) instead of torch.multinomial, so a response is
// reproducible from its seed on any device; the acceptance test takes recorded uniforms, so a
// recorded step can be replayed exactly.

#include <cstdint>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/engine/sampling.h"

namespace dfi::engine {

// logits [..., V] -> float32 probabilities [..., V]: logits / T, the top-k kept (0 < k < V),
// softmax, then the tokens whose preceding mass (most probable first) is below top_p kept and
// renormalised. Needs temperature > 0.
at::Tensor samplingProbs(const at::Tensor& logits, const SamplingOptions& sampling);

// One token per row of probs [n, V] by inverse CDF with uniforms[i] in [0, 1): the first token
// whose cumulative probability exceeds u times the row's total (a zero-probability token is
// never drawn).
std::vector<std::int64_t> drawTokens(const at::Tensor& probs, std::span<const double> uniforms);

struct RejectionOutcome {
  int accepted = 0;             // leading drafted slots accepted
  std::vector<float> p, q;      // per drafted slot: the target's and the drafter's probability of its draft
  at::Tensor next;              // [V] float32: where the step's last token is drawn from (the residual
                                // at the first rejected slot, or the target's distribution after the block)
};

// drafts [g], targetProbs [g + 1, V], draftProbs [g, V], uniforms [g] (float32).
RejectionOutcome rejectionSample(std::span<const std::int64_t> drafts, const at::Tensor& targetProbs,
                                 const at::Tensor& draftProbs, std::span<const float> uniforms);

}  // namespace dfi::engine
