#include "models/gemma4_feed_forward.h"

#include <cmath>

#include <ATen/ATen.h>

#include "io/weight_loader.h"
#include "kernels/norms.h"
#include "kernels/projection.h"
#include "models/routing_record.h"

namespace dfi::engine {

using modelspec::NormKind;

Gemma4FeedForward::Gemma4FeedForward(const WeightLoader& weights, const std::string& prefix,
                                     const modelspec::TargetConfig& config, int layer, at::Device device)
    : eps_(config.rmsNormEps),
      preNorm_(weights.load(prefix + "pre_feedforward_layernorm.weight", {config.hiddenSize}, device)),
      postNorm_(weights.load(prefix + "post_feedforward_layernorm.weight", {config.hiddenSize}, device)),
      mlp_(weights, prefix + "mlp.", config.hiddenSize, config.mlpIntermediateSize(layer), device, false,
           config.traits.activation) {
  if (!config.moe) return;
  const int64_t h = config.hiddenSize, e = config.moe->numExperts;
  topK_ = config.moe->numExpertsPerToken;
  experts_.emplace(weights, prefix + "experts.", e, config.moe->moeIntermediateSize, h, device,
                   config.traits.activation);
  routerProj_ = weights.load(prefix + "router.proj.weight", {e, h}, device);
  routerScale_ = weights.load(prefix + "router.scale", {h}, device);
  perExpertScale_ = weights.load(prefix + "router.per_expert_scale", {e}, device);
  routerNorm_ = at::ones({h}, at::TensorOptions().dtype(weights.dtype()).device(device));
  preExpertsNorm_ = weights.load(prefix + "pre_feedforward_layernorm_2.weight", {h}, device);
  postMlpNorm_ = weights.load(prefix + "post_feedforward_layernorm_1.weight", {h}, device);
  postExpertsNorm_ = weights.load(prefix + "post_feedforward_layernorm_2.weight", {h}, device);
}

std::pair<at::Tensor, at::Tensor> Gemma4FeedForward::route(const at::Tensor& flat) const {
  // Op for op as Gemma4TextRouter, so that bf16 rounds alike: the scaled norm in the compute
  // dtype, softmax and renormalisation in fp32, the per-expert scale applied in fp32.
  const double rootScale = std::pow(static_cast<double>(flat.size(-1)), -0.5);
  const at::Tensor scaled = rmsNorm(NormKind::Fp32Compute, flat, routerNorm_, eps_) * routerScale_ * rootScale;
  const at::Tensor probs = at::softmax(project(scaled, routerProj_), -1, at::kFloat);
  auto [weights, experts] = at::topk(probs, topK_, -1);
  weights = weights / weights.sum(-1, true);
  return {experts, weights * perExpertScale_.index_select(0, experts.reshape(-1)).view(experts.sizes())};
}

at::Tensor Gemma4FeedForward::forward(const at::Tensor& h, ExpertRouting* routing) const {
  const NormKind norm = NormKind::Fp32Compute;
  at::Tensor m = mlp_.forward(rmsNorm(norm, h, preNorm_, eps_));
  if (experts_) {
    const at::Tensor flat = h.reshape({-1, h.size(-1)});
    auto [experts, weights] = route(flat);
    const at::Tensor routed = experts_->forward(rmsNorm(norm, flat, preExpertsNorm_, eps_), experts, weights);
    m = rmsNorm(norm, m, postMlpNorm_, eps_) + rmsNorm(norm, routed.view(h.sizes()), postExpertsNorm_, eps_);
    recordRouting(routing, h, experts, weights);
  }
  return rmsNorm(norm, m, postNorm_, eps_);
}

}  // namespace dfi::engine
