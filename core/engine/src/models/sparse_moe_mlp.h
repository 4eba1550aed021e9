#pragma once
// The sparse mixture-of-experts MLP of Qwen3-MoE, Qwen3.5-MoE, Qwen3-Next, MiniMax-M2 and
// GLM-4.5, as transformers computes it (Qwen3MoeSparseMoeBlock, Qwen3NextSparseMoeBlock with its
// TopKRouter, MiniMaxM2SparseMoeBlock, Glm4MoeMoE):
//   softmax scoring: p = softmax(router x) in fp32; top-k of p, renormalised to sum 1 when
//   norm_topk_prob; sigmoid scoring: SigmoidRouter's choice and weights;
//   y = sum over the chosen experts e of  w_e * down_e(silu(gate_e x) * up_e x)
//   (+ sigmoid(shared_expert_gate x) * shared_expert(x) where the family has one; GLM-4.5's
//   shared experts are added ungated).
// Only the chosen experts run, in any stored layout (RoutedExperts).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "models/dense_mlp.h"
#include "models/expert_routing.h"
#include "models/routed_experts.h"
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

  int numExperts() const { return experts_.numExperts(); }
  int topK() const { return topK_; }

 private:
  // Chosen experts [N, k] (int64) and their weights [N, k] in the dtype the router applies them
  // in: x's for softmax scoring, fp32 for sigmoid scoring.
  std::pair<at::Tensor, at::Tensor> route(const at::Tensor& x) const;

  int topK_;
  bool normTopkProb_;
  at::Tensor router_;                           // [E, H], softmax scoring
  std::optional<SigmoidRouter> sigmoidRouter_;  // sigmoid scoring
  RoutedExperts experts_;
  std::optional<DenseMlp> sharedExpert_;
  at::Tensor sharedExpertGate_;                       // [1, H]; undefined when ungated
};

}  // namespace dfi::engine
