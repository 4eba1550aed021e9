#include "models/dense_mlp.h"

#include <ATen/ATen.h>

#include "io/weight_loader.h"
#include "kernels/projection.h"

namespace dfi::engine {

DenseMlp::DenseMlp(const WeightLoader& weights, const std::string& prefix, int64_t hidden, int64_t intermediate,
                   at::Device device, bool bias, modelspec::MlpActivation activation)
    : gateUpProj_(at::cat({weights.load(prefix + "gate_proj.weight", {intermediate, hidden}, device),
                           weights.load(prefix + "up_proj.weight", {intermediate, hidden}, device)})),
      downProj_(weights.load(prefix + "down_proj.weight", {hidden, intermediate}, device)),
      activation_(activation) {
  if (!bias) return;
  gateUpBias_ = at::cat({weights.load(prefix + "gate_proj.bias", {intermediate}, device),
                         weights.load(prefix + "up_proj.bias", {intermediate}, device)});
  downBias_ = weights.load(prefix + "down_proj.bias", {hidden}, device);
}

at::Tensor DenseMlp::forward(const at::Tensor& x, ExpertRouting* /*routing*/) const {
  const at::Tensor gateUp = project(x, gateUpProj_, gateUpBias_);
  const int64_t inter = gateUpProj_.size(0) / 2;
  return project(gatedActivation(activation_, gateUp.narrow(-1, 0, inter), gateUp.narrow(-1, inter, inter)), downProj_,
                 downBias_);
}

at::Tensor gatedActivation(modelspec::MlpActivation activation, const at::Tensor& gate, const at::Tensor& up) {
  // gelu_pytorch_tanh is torch's gelu(approximate="tanh").
  return (activation == modelspec::MlpActivation::GeluTanh ? at::gelu(gate, "tanh") : at::silu(gate)) * up;
}

}  // namespace dfi::engine
