#include "models/routed_experts.h"

#include <ATen/ATen.h>

#include "io/weight_loader.h"
#include "kernels/projection.h"
#include "models/dense_mlp.h"

namespace dfi::engine {

RoutedExperts::RoutedExperts(const WeightLoader& weights, const std::string& prefix, int64_t experts,
                             int64_t intermediate, int64_t hidden, at::Device device,
                             modelspec::MlpActivation activation)
    : activation_(activation) {
  const int64_t inter = intermediate;
  if (weights.contains(prefix + "gate_up_proj")) {
    const at::Tensor gateUp = weights.load(prefix + "gate_up_proj", {experts, 2 * inter, hidden}, device);
    const at::Tensor down = weights.load(prefix + "down_proj", {experts, hidden, inter}, device);
    for (int64_t e = 0; e < experts; ++e) {
      gateProj_.push_back(gateUp[e].narrow(0, 0, inter));
      upProj_.push_back(gateUp[e].narrow(0, inter, inter));
      downProj_.push_back(down[e]);
    }
    return;
  }
  // Mixtral's names (w1 gate, w3 up, w2 down) where the checkpoint uses them.
  const bool mixtral = weights.contains(prefix + "0.w1.weight");
  const std::string gate = mixtral ? "w1.weight" : "gate_proj.weight", up = mixtral ? "w3.weight" : "up_proj.weight",
                    down = mixtral ? "w2.weight" : "down_proj.weight";
  for (int64_t e = 0; e < experts; ++e) {
    const std::string p = prefix + std::to_string(e) + ".";
    gateProj_.push_back(weights.load(p + gate, {inter, hidden}, device));
    upProj_.push_back(weights.load(p + up, {inter, hidden}, device));
    downProj_.push_back(weights.load(p + down, {hidden, inter}, device));
  }
}

at::Tensor RoutedExperts::expert(int e, const at::Tensor& rows) const {
  return project(gatedActivation(activation_, project(rows, gateProj_[e]), project(rows, upProj_[e])), downProj_[e]);
}

at::Tensor RoutedExperts::forward(const at::Tensor& x, const at::Tensor& experts, const at::Tensor& weights) const {
  const int64_t n = x.size(0), hidden = x.size(1), topK = experts.size(-1);
  // Group the n * k (position, slot) pairs by expert: a stable sort keeps positions ascending
  // within an expert, and the counts (one host copy) delimit each expert's rows.
  const at::Tensor pairExperts = experts.reshape(-1);
  const at::Tensor order = std::get<1>(at::sort(pairExperts, /*stable=*/true, 0, false));
  const at::Tensor counts = at::bincount(pairExperts, {}, numExperts()).cpu();
  const at::Tensor positions = at::floor_divide(order, topK);
  const at::Tensor pairWeights = weights.reshape(-1).index_select(0, order).unsqueeze(-1);

  const at::ScalarType accumulate = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor out = at::zeros({n, hidden}, x.options().dtype(accumulate));
  const auto* count = counts.data_ptr<int64_t>();
  int64_t start = 0;
  for (int e = 0; e < numExperts(); ++e) {
    if (count[e] == 0) continue;
    const at::Tensor rows = positions.narrow(0, start, count[e]);
    const at::Tensor y = expert(e, x.index_select(0, rows)) * pairWeights.narrow(0, start, count[e]);
    out.index_add_(0, rows, y.to(accumulate));
    start += count[e];
  }
  return out.to(x.scalar_type());
}

}  // namespace dfi::engine
