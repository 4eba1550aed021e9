#pragma once
// DeepSeek-V3's expert router, as transformers computes it for every family that uses it
// (MiniMaxM2TopKRouter; Glm4MoeTopkRouter, DeepseekV3TopkRouter with their options):
//   s = sigmoid(router x) in fp32;  b = s + e_score_correction_bias (for the choice only);
//   with groups: the experts split into numGroups groups, each ranked by the sum of its two best
//   b, and only the topkGroups best groups' experts stay candidates;
//   experts = top-k of b among the candidates;  weights = their s, divided by the sum when
//   normTopkProb, times routedScalingFactor.
// The weights stay fp32, as transformers multiplies the experts' outputs by them.

#include <cstdint>
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace dfi::modelspec {
struct MoeConfig;
}

namespace dfi::engine {

class WeightLoader;

class SigmoidRouter {
 public:
  // `prefix` ends in the sparse block's "mlp." (or "block_sparse_moe."): the router is
  // <prefix>gate.weight [E, H]; the bias <prefix>gate.e_score_correction_bias (GLM, DeepSeek-V3)
  // or <prefix>e_score_correction_bias (MiniMax-M2), whichever the checkpoint holds.
  SigmoidRouter(const WeightLoader& weights, const std::string& prefix, const modelspec::MoeConfig& moe,
                int64_t hidden, at::Device device);

  // flat [N, H] -> chosen experts [N, k] (int64, best biased score first) and their weights
  // [N, k] (fp32).
  std::pair<at::Tensor, at::Tensor> route(const at::Tensor& flat) const;

 private:
  // The choice scores with every expert outside the best groups at -inf.
  at::Tensor keepBestGroups(const at::Tensor& choice) const;

  int topK_, numGroups_, topkGroups_;
  bool normalise_, fp32Logits_;
  double scaling_;
  at::Tensor weight_;  // [E, H]: fp32 when the family keeps its router in fp32, else the compute dtype
  at::Tensor bias_;    // [E] fp32, holding the values transformers adds (see the constructor)
};

}  // namespace dfi::engine
