#include "models/sparse_moe_mlp.h"

#include <ATen/ATen.h>

#include "dfi/modelspec/target_config.h"
#include "io/weight_loader.h"
#include "kernels/projection.h"
#include "models/routing_record.h"

namespace dfi::engine {

SparseMoeMlp::SparseMoeMlp(const WeightLoader& weights, const std::string& prefix, const modelspec::MoeConfig& moe,
                           int64_t hidden, at::Device device)
    // The router first (members in declaration order): an expert count that disagrees with the
    // checkpoint is named on its [experts, hidden] matrix, before any expert tensor is read.
    : topK_(moe.numExpertsPerToken),
      normTopkProb_(moe.normTopkProb),
      router_(moe.scoring == modelspec::RouterScoring::Sigmoid
                  ? at::Tensor()
                  : weights.load(prefix + "gate.weight", {moe.numExperts, hidden}, device)),
      sigmoidRouter_(moe.scoring == modelspec::RouterScoring::Sigmoid
                         ? std::make_optional<SigmoidRouter>(weights, prefix, moe, hidden, device)
                         : std::nullopt),
      experts_(weights, prefix + "experts.", moe.numExperts, moe.moeIntermediateSize, hidden, device,
               modelspec::MlpActivation::Silu) {
  if (moe.hasSharedExpert()) {
    // Qwen's gated shared expert is mlp.shared_expert + shared_expert_gate; the DeepSeek-V3
    // line's ungated one is mlp.shared_experts.
    sharedExpert_.emplace(weights, prefix + (moe.sharedExpertGated ? "shared_expert." : "shared_experts."), hidden,
                          moe.sharedExpertIntermediateSize, device);
    if (moe.sharedExpertGated) sharedExpertGate_ = weights.load(prefix + "shared_expert_gate.weight", {1, hidden}, device);
  }
}

std::pair<at::Tensor, at::Tensor> SparseMoeMlp::route(const at::Tensor& x) const {
  if (sigmoidRouter_) return sigmoidRouter_->route(x);
  // As Qwen3MoeTopKRouter: logits in the compute dtype, softmax and top-k in fp32, the
  // renormalised weights cast back to the compute dtype before they scale the experts.
  const at::Tensor probs = at::softmax(project(x, router_), -1, at::kFloat);
  auto [weights, experts] = at::topk(probs, topK_, -1);
  if (normTopkProb_) weights = weights / weights.sum(-1, true);
  return {experts, weights.to(x.scalar_type())};
}

at::Tensor SparseMoeMlp::forward(const at::Tensor& x, ExpertRouting* routing) const {
  const at::Tensor flat = x.reshape({-1, x.size(-1)});
  auto [experts, weights] = route(flat);
  at::Tensor out = experts_.forward(flat, experts, weights);
  if (sharedExpert_) {
    const at::Tensor shared = sharedExpert_->forward(flat);
    out = out + (sharedExpertGate_.defined() ? at::sigmoid(project(flat, sharedExpertGate_)) * shared : shared);
  }
  recordRouting(routing, x, experts, weights);
  return out.reshape(x.sizes());
}

}  // namespace dfi::engine
