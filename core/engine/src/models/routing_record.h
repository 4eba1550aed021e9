#pragma once
// Fills an ExpertRouting from a router's per-position choice, shaped like the MLP's input
// (x [..., H] -> [..., k]); shared by the MoE MLP kinds (SparseMoeMlp, GptOssMlp). Included
// only by their sources, so expert_routing.h (behind decoder_layer.h) stays declarations only.

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "models/expert_routing.h"

namespace dfi::engine {

// experts, weights: [N, k] for the N positions of x. Does nothing when routing is null.
inline void recordRouting(ExpertRouting* routing, const at::Tensor& x, const at::Tensor& experts,
                          const at::Tensor& weights) {
  if (!routing) return;
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
  shape.push_back(experts.size(-1));
  routing->experts = experts.reshape(shape);
  routing->weights = weights.to(at::kFloat).reshape(shape);
}

}  // namespace dfi::engine
