#pragma once
// The sparse mixture-of-experts MLP of Qwen3-MoE, Qwen3.5-MoE, Qwen3-Next, MiniMax-M2 and
// GLM-4.5, as transformers computes it (Qwen3MoeSparseMoeBlock, Qwen3NextSparseMoeBlock with its
// TopKRouter, MiniMaxM2SparseMoeBlock, Glm4MoeMoE):
//   softmax scoring: p = softmax(router x) in fp32; top-k of p, renormalised to sum 1 when
//   norm_topk_prob; sigmoid scoring: SigmoidRouter's choice and weights;
//   y = sum over the chosen experts e of  w_e * down_e(silu(gate_e x) * up_e x)
//   (+ sigmoid(shared_expert_gate x) * shared_expert(x) where the family has one; GLM-4.5's
//   shared experts are added ungated).
// Only the chosen experts run: positions are grouped by expert, each expert multiplies its
// own rows, and the weighted rows are added back per position.
//
// Experts are read in any layout published checkpoints use: one tensor per expert
// (mlp.experts.<e>.{gate,up,down}_proj.weight, what save_pretrained writes through
// transformers' conversion mapping; block_sparse_moe.experts.<e>.{w1,w3,w2}.weight in the
// Mixtral layout of MiniMax-M2) or stacked (mlp.experts.gate_up_proj [E, 2I, H] with gate
// rows first, mlp.experts.down_proj [E, H, I], transformers' in-memory layout). Each expert's
// gate, up and down matrices are the loaded tensors or views of them, never concatenated: on
// the CPU in the stored dtype they alias the memory map, so the experts (nearly all of a MoE
// model's weights) are not held twice.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "models/dense_mlp.h"
#include "models/expert_routing.h"
#include "models/sigmoid_router.h"

namespace dfi::modelspec {
struct MoeConfig;
}

namespace dfi::engine {

class WeightLoader;

class SparseMoeMlp {
 public:
  // `prefix` ends in "mlp." (or "block_sparse_moe.").
  SparseMoeMlp(const WeightLoader& weights, const std::string& prefix, const modelspec::MoeConfig& moe,
               int64_t hidden, at::Device device);

  // x [B, T, hidden]. With `routing`, fills it with the experts chosen per position and their
  // weights as applied.
  at::Tensor forward(const at::Tensor& x, ExpertRouting* routing) const;

  int numExperts() const { return static_cast<int>(downProj_.size()); }
  int topK() const { return topK_; }

 private:
  // Chosen experts [N, k] (int64) and their weights [N, k] in the dtype the router applies them
  // in: x's for softmax scoring, fp32 for sigmoid scoring.
  std::pair<at::Tensor, at::Tensor> route(const at::Tensor& x) const;
  at::Tensor expert(int e, const at::Tensor& rows) const;

  int topK_;
  bool normTopkProb_;
  at::Tensor router_;                                 // [E, H], softmax scoring
  std::optional<SigmoidRouter> sigmoidRouter_;        // sigmoid scoring
  std::vector<at::Tensor> gateProj_, upProj_, downProj_;  // per expert: [I, H], [I, H], [H, I]
  std::optional<DenseMlp> sharedExpert_;
  at::Tensor sharedExpertGate_;                       // [1, H]; undefined when ungated
};

}  // namespace dfi::engine
