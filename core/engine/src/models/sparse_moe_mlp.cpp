#include "models/sparse_moe_mlp.h"

#include <ATen/ATen.h>

#include "dfi/modelspec/target_config.h"
#include "io/weight_loader.h"
#include "kernels/projection.h"
#include "models/routing_record.h"

namespace dfi::engine {

SparseMoeMlp::SparseMoeMlp(const WeightLoader& weights, const std::string& prefix, const modelspec::MoeConfig& moe,
                           int64_t hidden, at::Device device)
    : topK_(moe.numExpertsPerToken), normTopkProb_(moe.normTopkProb) {
  const int64_t experts = moe.numExperts, inter = moe.moeIntermediateSize;
  if (moe.scoring == modelspec::RouterScoring::Sigmoid)
    sigmoidRouter_.emplace(weights, prefix, moe, hidden, device);
  else
    router_ = weights.load(prefix + "gate.weight", {experts, hidden}, device);
  const std::string stacked = prefix + "experts.";
  if (weights.contains(stacked + "gate_up_proj")) {
    const at::Tensor gateUp = weights.load(stacked + "gate_up_proj", {experts, 2 * inter, hidden}, device);
    const at::Tensor down = weights.load(stacked + "down_proj", {experts, hidden, inter}, device);
    for (int64_t e = 0; e < experts; ++e) {
      gateProj_.push_back(gateUp[e].narrow(0, 0, inter));
      upProj_.push_back(gateUp[e].narrow(0, inter, inter));
      downProj_.push_back(down[e]);
    }
  } else {
    // Mixtral's names (w1 gate, w3 up, w2 down) where the checkpoint uses them.
    const bool mixtral = weights.contains(stacked + "0.w1.weight");
    const std::string gate = mixtral ? "w1.weight" : "gate_proj.weight", up = mixtral ? "w3.weight" : "up_proj.weight",
                      down = mixtral ? "w2.weight" : "down_proj.weight";
    for (int64_t e = 0; e < experts; ++e) {
      const std::string p = stacked + std::to_string(e) + ".";
      gateProj_.push_back(weights.load(p + gate, {inter, hidden}, device));
      upProj_.push_back(weights.load(p + up, {inter, hidden}, device));
      downProj_.push_back(weights.load(p + down, {hidden, inter}, device));
    }
  }
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

at::Tensor SparseMoeMlp::expert(int e, const at::Tensor& rows) const {
  return project(at::silu(project(rows, gateProj_[e])) * project(rows, upProj_[e]), downProj_[e]);
}

at::Tensor SparseMoeMlp::forward(const at::Tensor& x, ExpertRouting* routing) const {
  const int64_t hidden = x.size(-1);
  const at::Tensor flat = x.reshape({-1, hidden});
  const int64_t n = flat.size(0);
  auto [experts, weights] = route(flat);

  // Group the n * k (position, slot) pairs by expert: a stable sort keeps positions ascending
  // within an expert, and the counts (one host copy) delimit each expert's rows.
  const at::Tensor pairExperts = experts.reshape(-1);
  const at::Tensor order = std::get<1>(at::sort(pairExperts, /*stable=*/true, 0, false));
  const at::Tensor counts = at::bincount(pairExperts, {}, numExperts()).cpu();
  const at::Tensor positions = at::floor_divide(order, topK_);
  const at::Tensor pairWeights = weights.reshape(-1).index_select(0, order).unsqueeze(-1);

  // transformers sums each position's k weighted expert outputs in fp32 and rounds once
  // (grouped_mm_experts_forward's reshape + sum), so low-precision outputs accumulate in fp32.
  const at::ScalarType accumulate = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor out = at::zeros({n, hidden}, flat.options().dtype(accumulate));
  const auto* count = counts.data_ptr<int64_t>();
  int64_t start = 0;
  for (int e = 0; e < numExperts(); ++e) {
    if (count[e] == 0) continue;
    const at::Tensor rows = positions.narrow(0, start, count[e]);
    const at::Tensor y = expert(e, flat.index_select(0, rows)) * pairWeights.narrow(0, start, count[e]);
    out.index_add_(0, rows, y.to(accumulate));
    start += count[e];
  }
  out = out.to(x.scalar_type());
  if (sharedExpert_) {
    const at::Tensor shared = sharedExpert_->forward(flat);
    out = out + (sharedExpertGate_.defined() ? at::sigmoid(project(flat, sharedExpertGate_)) * shared : shared);
  }
  recordRouting(routing, x, experts, weights);
  return out.reshape(x.sizes());
}

}  // namespace dfi::engine
