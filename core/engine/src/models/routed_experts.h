#pragma once
// The routed experts of a mixture-of-experts block, each a gated MLP
// down_e(act(gate_e x) * up_e x), run only for the positions routed to them: positions are
// grouped by expert, each expert multiplies its own rows, and the weighted rows are added back
// per position. Shared by Qwen's sparse MLPs (SparseMoeMlp) and Gemma 4's experts beside the
// dense MLP (Gemma4FeedForward), whose routers differ.
//
// Experts are read in either layout published checkpoints use: one tensor per expert
// (<prefix><e>.{gate,up,down}_proj.weight, what save_pretrained writes through transformers'
// conversion mapping; <prefix><e>.{w1,w3,w2}.weight in the Mixtral layout of MiniMax-M2) or stacked (<prefix>gate_up_proj [E, 2I, H] with gate rows first,
// <prefix>down_proj [E, H, I], transformers' in-memory layout). Each expert's gate, up and down
// matrices are the loaded tensors or views of them, never concatenated: on the CPU in the stored
// dtype they alias the memory map, so the experts (nearly all of a MoE model's weights) are not
// held twice.

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "dfi/modelspec/family_traits.h"

namespace dfi::engine {

class WeightLoader;

class RoutedExperts {
 public:
  // `prefix` ends in "experts.".
  RoutedExperts(const WeightLoader& weights, const std::string& prefix, int64_t experts, int64_t intermediate,
                int64_t hidden, at::Device device, modelspec::MlpActivation activation);

  int numExperts() const { return static_cast<int>(downProj_.size()); }

  // x [N, H]; experts [N, k] (int64) chosen per position, weights [N, k] their mixing weights.
  // Each expert output is multiplied by its weight in the wider of the two dtypes and the k
  // products of a position are summed in fp32 and rounded once, as transformers'
  // grouped_mm_experts_forward does (reshape + sum). Returns [N, H] in x's dtype.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& experts, const at::Tensor& weights) const;

 private:
  at::Tensor expert(int e, const at::Tensor& rows) const;

  std::vector<at::Tensor> gateProj_, upProj_, downProj_;  // per expert: [I, H], [I, H], [H, I]
  modelspec::MlpActivation activation_;
};

}  // namespace dfi::engine
