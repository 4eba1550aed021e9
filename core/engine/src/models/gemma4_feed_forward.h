#pragma once
// Gemma 4's feed-forward block (Gemma4TextDecoderLayer after attention), given the residual
// stream h and returning what is added to it:
//   m = mlp(pre_feedforward_layernorm(h))                        (GELU-tanh, DenseMlp)
// and with enable_moe_block (26B-A4B) routed experts beside the dense MLP:
//   m = post_feedforward_layernorm_1(m)
//       + post_feedforward_layernorm_2(experts(pre_feedforward_layernorm_2(h), router(h)))
// then post_feedforward_layernorm(m). The router (Gemma4TextRouter) reads h itself:
//   p = softmax(proj(rmsnorm(h) * scale * hidden^-0.5)) in fp32, the top k renormalised to sum
//   one and multiplied by the chosen experts' per_expert_scale.

#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/target_config.h"
#include "models/dense_mlp.h"
#include "models/expert_routing.h"
#include "models/routed_experts.h"

namespace dfi::engine {

class WeightLoader;

class Gemma4FeedForward {
 public:
  // `prefix` is the layer's ("model.layers.<i>.").
  Gemma4FeedForward(const WeightLoader& weights, const std::string& prefix, const modelspec::TargetConfig& config,
                    int layer, at::Device device);

  // h [B, T, H]: the residual stream after attention. With `routing`, the experts' choice.
  at::Tensor forward(const at::Tensor& h, ExpertRouting* routing) const;

  bool hasExperts() const { return experts_.has_value(); }

 private:
  std::pair<at::Tensor, at::Tensor> route(const at::Tensor& flat) const;

  double eps_;
  at::Tensor preNorm_, postNorm_;
  DenseMlp mlp_;
  // With experts only.
  int topK_ = 0;
  std::optional<RoutedExperts> experts_;
  at::Tensor routerProj_, routerScale_, perExpertScale_, routerNorm_;  // routerNorm_: ones (weightless)
  at::Tensor preExpertsNorm_, postMlpNorm_, postExpertsNorm_;
};

}  // namespace dfi::engine
