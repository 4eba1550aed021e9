#pragma once
// gpt-oss's mixture-of-experts MLP, as transformers' GptOssMLP computes it: a router (linear
// with bias) picks the top-k logits per token and softmaxes over those k; each chosen expert
// applies a clamped SwiGLU, (up + 1) * gate * sigmoid(alpha * gate) with gate <= limit and
// |up| <= limit, between gate_up_proj and down_proj, both with biases; the outputs are summed
// weighted by the router. Only the chosen experts run. Expert weights come stacked, either as
// the unquantised gate_up_proj [E, H, 2I] (gate and up interleaved by column) / down_proj
// [E, I, H], or as MXFP4 blocks and scales, dequantised at load (io/mxfp4.h).

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/target_config.h"
#include "models/expert_routing.h"

namespace dfi::engine {

class WeightLoader;

class GptOssMlp {
 public:
  GptOssMlp(const WeightLoader& weights, const modelspec::TargetConfig& config, int layerIndex, at::Device device);

  // x: [B, T, H] (post-attention-normed). Fills `routing` when given.
  at::Tensor forward(const at::Tensor& x, ExpertRouting* routing) const;

 private:
  int topK_;
  int64_t intermediate_;
  double alpha_, limit_;
  at::Tensor routerWeight_, routerBias_;  // [E, H], [E]
  // Per expert, as project() weights: [E, 2I, H] with the gate rows first, then the up rows
  // (the checkpoint interleaves them), and [E, H, I].
  at::Tensor gateUp_, gateUpBias_, down_, downBias_;
};

}  // namespace dfi::engine
