#pragma once
// What a mixture-of-experts MLP decided for each position: the experts it chose and the
// weights it gave them. Recorded like a hidden-state tap, because a router that behaves
// differently between training and serving is one more cause of low acceptance.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

struct ExpertRouting {
  at::Tensor experts;  // [B, T, k] int64: the chosen experts, in the router's order (highest first)
  at::Tensor weights;  // [B, T, k] fp32: their mixing weights as applied (after any renormalisation)
};

}  // namespace dfi::engine
