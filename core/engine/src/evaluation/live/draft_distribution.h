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

}  // namespace dfi::engine
