#pragma once
// The per-slot top-k of a drafted block, as stored with every step: the GUI's hover table,
// the target token's rank, and the input of DDTree (docs/dflash.md 5.1 takes the top-k of the
// float32 log-softmax over the whole vocabulary).

#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/session/records.h"

namespace dfi::engine {

// logits [slots, V] (any dtype/device) -> ids and probabilities, slots x k row-major, most
// probable first; probabilities are the float32 softmax over the full vocabulary.
void fillTopK(const at::Tensor& logits, int k, std::vector<session::TokenId>& ids,
              std::vector<float>& probs);

// Per row of the target's and the drafter's logits [rows, V] (any dtype, one device):
// sum_v min(p_v, q_v) of their float32 softmaxes, the chance that speculative sampling at
// temperature 1 accepts a draft from q where the target samples from p (1 - TV(p, q), what
// speculators' tv_loss and accept_rate compute).
std::vector<float> distributionOverlap(const at::Tensor& targetLogits, const at::Tensor& draftLogits);

}  // namespace dfi::engine
