#pragma once
// The SwiGLU MLP: down(silu(gate x) * up x), with biases where the config asks (Llama's
// mlp_bias). A dense layer's MLP, and the shared expert of the Qwen3.5-MoE and Qwen3-Next
// sparse blocks.

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "models/expert_routing.h"

namespace dfi::engine {

class WeightLoader;

class DenseMlp {
 public:
  // Reads <prefix>gate_proj.weight, up_proj.weight [intermediate, hidden] and down_proj.weight,
  // and with `bias` their .bias vectors.
  DenseMlp(const WeightLoader& weights, const std::string& prefix, int64_t hidden, int64_t intermediate,
           at::Device device, bool bias = false);

  // x [..., hidden]; a dense MLP routes nothing, so `routing` is left alone.
  at::Tensor forward(const at::Tensor& x, ExpertRouting* routing = nullptr) const;

 private:
  at::Tensor gateUpProj_, downProj_;  // gate_proj and up_proj stacked: one GEMM instead of two
  at::Tensor gateUpBias_, downBias_;  // undefined without bias
};

}  // namespace dfi::engine
