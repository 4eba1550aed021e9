#include "models/gpt_oss_mlp.h"

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/mxfp4.h"
#include "io/weight_loader.h"
#include "kernels/projection.h"
#include "models/routing_record.h"

namespace dfi::engine {
namespace {

// Column 2j of the checkpoint's gate_up is gate j, column 2j + 1 up j (transformers slices
// [..., ::2] and [..., 1::2]); the engine keeps them as two contiguous row ranges.
at::Tensor gateRowsThenUpRows(const at::Tensor& interleaved, int64_t dim) {
  return at::cat({interleaved.slice(dim, 0, std::nullopt, 2), interleaved.slice(dim, 1, std::nullopt, 2)}, dim)
      .contiguous();
}

}  // namespace

GptOssMlp::GptOssMlp(const WeightLoader& weights, const modelspec::TargetConfig& config, int layerIndex,
                     at::Device device)
    : topK_(config.moe->numExpertsPerToken),
      intermediate_(config.moe->moeIntermediateSize),
      alpha_(config.swigluClamp->alpha),
      limit_(config.swigluClamp->limit) {
  const std::string prefix = "model.layers." + std::to_string(layerIndex) + ".mlp.";
  const int64_t e = config.moe->numExperts, h = config.hiddenSize, i = intermediate_;
  routerWeight_ = weights.load(prefix + "router.weight", {e, h}, device);
  routerBias_ = weights.load(prefix + "router.bias", {e}, device);
  const std::string experts = prefix + "experts.";
  const bool mxfp4 = weights.contains(experts + "gate_up_proj_blocks");
  if (mxfp4 && !config.quantization)
    throw ValidationError("the checkpoint stores MXFP4 experts (gate_up_proj_blocks) but config.json has no "
                          "quantization_config with quant_method mxfp4",
                          {.file = weights.checkpointPath(), .item = experts + "gate_up_proj_blocks"});
  // Both layouts end as [E, in, out] (x @ W), the layout transformers computes with.
  const at::Tensor gateUp = mxfp4 ? loadMxfp4(weights, experts + "gate_up_proj", e, h, 2 * i, device)
                                  : weights.load(experts + "gate_up_proj", {e, h, 2 * i}, device);
  const at::Tensor down = mxfp4 ? loadMxfp4(weights, experts + "down_proj", e, i, h, device)
                                : weights.load(experts + "down_proj", {e, i, h}, device);
  gateUp_ = gateRowsThenUpRows(gateUp.transpose(1, 2), 1);
  down_ = down.transpose(1, 2).contiguous();
  gateUpBias_ = gateRowsThenUpRows(weights.load(experts + "gate_up_proj_bias", {e, 2 * i}, device), 1);
  downBias_ = weights.load(experts + "down_proj_bias", {e, h}, device);
}

at::Tensor GptOssMlp::forward(const at::Tensor& x, ExpertRouting* routing) const {
  const int64_t hidden = x.size(-1);
  const at::Tensor flat = x.reshape({-1, hidden});
  const at::Tensor logits = at::linear(flat, routerWeight_, routerBias_);
  const auto [topValues, topIndices] = at::topk(logits, topK_, -1);
  const at::Tensor scores = at::softmax(topValues, 1, topValues.scalar_type());  // [N, k]

  // Which (token, slot) pairs each expert serves, experts in ascending order as transformers
  // visits them (the order the outputs are summed in).
  const at::Tensor chosen = topIndices.cpu().contiguous();
  const int64_t tokens = chosen.size(0), numExperts = routerWeight_.size(0);
  std::vector<std::vector<int64_t>> tokensOf(numExperts), slotsOf(numExperts);
  const int64_t* c = chosen.data_ptr<int64_t>();
  for (int64_t slot = 0; slot < topK_; ++slot)  // slot-major, as torch.where over [k, tokens]
    for (int64_t t = 0; t < tokens; ++t) {
      tokensOf[c[t * topK_ + slot]].push_back(t);
      slotsOf[c[t * topK_ + slot]].push_back(slot);
    }

  at::Tensor out = at::zeros_like(flat);
  for (int64_t e = 0; e < numExperts; ++e) {
    if (tokensOf[e].empty()) continue;
    const at::Tensor tokenIdx = at::tensor(tokensOf[e], at::kLong).to(x.device());
    const at::Tensor slotIdx = at::tensor(slotsOf[e], at::kLong).to(x.device());
    const at::Tensor state = flat.index_select(0, tokenIdx);
    // Projection then bias as two ops, each rounded, as x @ W + b is in transformers.
    const at::Tensor gateUp = project(state, gateUp_[e]) + gateUpBias_[e];
    const at::Tensor gate = gateUp.narrow(-1, 0, intermediate_).clamp_max(limit_);
    const at::Tensor up = gateUp.narrow(-1, intermediate_, intermediate_).clamp(-limit_, limit_);
    const at::Tensor glu = gate * at::sigmoid(gate * alpha_);
    const at::Tensor expertOut = project((up + 1) * glu, down_[e]) + downBias_[e];
    const at::Tensor weight = scores.index({tokenIdx, slotIdx}).unsqueeze(-1);
    out.index_add_(0, tokenIdx, (expertOut * weight).to(flat.scalar_type()));
  }
  recordRouting(routing, x, topIndices, scores);
  return out.view(x.sizes());
}

}  // namespace dfi::engine
