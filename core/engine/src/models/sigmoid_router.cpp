#include "models/sigmoid_router.h"

#include <limits>

#include <ATen/ATen.h>

#include "dfi/modelspec/target_config.h"
#include "io/weight_loader.h"
#include "kernels/projection.h"

namespace dfi::engine {

SigmoidRouter::SigmoidRouter(const WeightLoader& weights, const std::string& prefix, const modelspec::MoeConfig& moe,
                             int64_t hidden, at::Device device)
    : topK_(moe.numExpertsPerToken),
      numGroups_(moe.numGroups),
      topkGroups_(moe.topkGroups),
      normalise_(moe.normTopkProb),
      fp32Logits_(moe.routerInFp32),
      scaling_(moe.routedScalingFactor) {
  const int64_t experts = moe.numExperts;
  // The DeepSeek-V3 line keeps gate.weight and the bias in fp32 at any dtype
  // (_keep_in_fp32_modules_strict); MiniMax-M2 holds both in the compute dtype, so its bias is
  // the compute dtype's rounding of the stored values, added to the fp32 scores.
  const WeightLoader routerWeights = fp32Logits_ ? weights.withDtype(at::kFloat) : weights;
  weight_ = routerWeights.load(prefix + "gate.weight", {experts, hidden}, device);
  const std::string inGate = prefix + "gate.e_score_correction_bias";
  bias_ = routerWeights.load(weights.contains(inGate) ? inGate : prefix + "e_score_correction_bias", {experts}, device)
              .to(at::kFloat);
}

at::Tensor SigmoidRouter::keepBestGroups(const at::Tensor& choice) const {
  const int64_t n = choice.size(0), experts = choice.size(1);
  const at::Tensor grouped = choice.view({n, numGroups_, experts / numGroups_});
  const at::Tensor groupScores = std::get<0>(grouped.topk(2, -1)).sum(-1);  // [N, G]
  const at::Tensor bestGroups = std::get<1>(groupScores.topk(topkGroups_, -1));
  const at::Tensor keep = at::zeros_like(groupScores, at::kBool).scatter_(1, bestGroups, true);
  return grouped.masked_fill(keep.logical_not().unsqueeze(-1), -std::numeric_limits<double>::infinity())
      .view({n, experts});
}

std::pair<at::Tensor, at::Tensor> SigmoidRouter::route(const at::Tensor& flat) const {
  const at::Tensor logits = project(fp32Logits_ ? flat.to(at::kFloat) : flat, weight_);
  const at::Tensor scores = at::sigmoid(logits.to(at::kFloat));
  at::Tensor choice = scores + bias_;
  if (numGroups_ > 1) choice = keepBestGroups(choice);
  const at::Tensor experts = std::get<1>(choice.topk(topK_, -1));
  at::Tensor weights = scores.gather(1, experts);
  // transformers' DeepSeek-V3 routers add 1e-20 to the sum (MiniMax-M2's does not): below the
  // fp32 spacing of any sum of k sigmoids that is not itself vanishing, so one rule serves both.
  if (normalise_) weights = weights / (weights.sum(-1, true) + 1e-20);
  if (scaling_ != 1.0) weights = weights * scaling_;
  return {experts, weights};
}

}  // namespace dfi::engine
