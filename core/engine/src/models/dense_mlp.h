#pragma once
// The gated MLP: down(act(gate x) * up x), act silu (SwiGLU) or GELU-tanh (Gemma), with biases
// where the config asks (Llama's mlp_bias). A dense layer's MLP, the shared expert of the
// Qwen3.5-MoE and Qwen3-Next sparse blocks, and Gemma 4's dense MLP.

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "dfi/modelspec/family_traits.h"
#include "models/expert_routing.h"

namespace dfi::engine {

class WeightLoader;

class DenseMlp {
 public:
  // Reads <prefix>gate_proj.weight, up_proj.weight [intermediate, hidden] and down_proj.weight,
  // and with `bias` their .bias vectors.
  DenseMlp(const WeightLoader& weights, const std::string& prefix, int64_t hidden, int64_t intermediate,
           at::Device device, bool bias = false,
           modelspec::MlpActivation activation = modelspec::MlpActivation::Silu);

  // x [..., hidden]; a dense MLP routes nothing, so `routing` is left alone.
  at::Tensor forward(const at::Tensor& x, ExpertRouting* routing = nullptr) const;

 private:
  at::Tensor gateUpProj_, downProj_;  // gate_proj and up_proj stacked: one GEMM instead of two
  at::Tensor gateUpBias_, downBias_;  // undefined without bias
  modelspec::MlpActivation activation_;
};

// act(gate) * up, the gated product of the MLPs and experts.
at::Tensor gatedActivation(modelspec::MlpActivation activation, const at::Tensor& gate, const at::Tensor& up);

}  // namespace dfi::engine
