#include "models/per_layer_inputs.h"

#include <cmath>

#include <ATen/ATen.h>

#include "io/weight_loader.h"
#include "kernels/norms.h"
#include "kernels/projection.h"
#include "models/dense_mlp.h"

namespace dfi::engine {

using modelspec::NormKind;

at::Tensor embeddingScale(double scale, at::ScalarType dtype, at::Device device) {
  return at::scalar_tensor(scale, at::TensorOptions().dtype(dtype).device(device));
}

PerLayerInputs::PerLayerInputs(const WeightLoader& weights, const modelspec::TargetConfig& config, at::Device device)
    : numLayers_(config.numHiddenLayers), width_(config.perLayerInputs->hiddenSize), eps_(config.rmsNormEps) {
  const int64_t packed = int64_t{numLayers_} * width_;
  embedding_ = weights.load("model.embed_tokens_per_layer.weight", {config.perLayerInputs->vocabSize, packed}, device);
  embeddingScale_ = embeddingScale(std::sqrt(static_cast<double>(width_)), weights.dtype(), device);
  projection_ = weights.load("model.per_layer_model_projection.weight", {packed, config.hiddenSize}, device);
  projectionNorm_ = weights.load("model.per_layer_projection_norm.weight", {width_}, device);
}

at::Tensor PerLayerInputs::forward(const at::Tensor& ids, const at::Tensor& embeddings) const {
  const int64_t batch = ids.size(0), steps = ids.size(1);
  const at::Tensor byToken =
      (at::embedding(embedding_, ids.to(embedding_.device(), at::kLong)) * embeddingScale_)
          .reshape({batch, steps, numLayers_, width_});
  const double projectionScale = std::pow(static_cast<double>(embeddings.size(-1)), -0.5);
  const at::Tensor byContext = rmsNorm(NormKind::Fp32Compute,
                                       (project(embeddings, projection_) * projectionScale)
                                           .reshape({batch, steps, numLayers_, width_}),
                                       projectionNorm_, eps_);
  return (byContext + byToken) * std::pow(2.0, -0.5);
}

PerLayerInputGate::PerLayerInputGate(const WeightLoader& weights, const std::string& prefix,
                                     const modelspec::TargetConfig& config, at::Device device)
    : eps_(config.rmsNormEps),
      gate_(weights.load(prefix + "per_layer_input_gate.weight",
                         {config.perLayerInputs->hiddenSize, config.hiddenSize}, device)),
      projection_(weights.load(prefix + "per_layer_projection.weight",
                               {config.hiddenSize, config.perLayerInputs->hiddenSize}, device)),
      norm_(weights.load(prefix + "post_per_layer_input_norm.weight", {config.hiddenSize}, device)) {}

at::Tensor PerLayerInputGate::forward(const at::Tensor& y, const at::Tensor& input) const {
  const at::Tensor gated = gatedActivation(modelspec::MlpActivation::GeluTanh, project(y, gate_), input);
  return y + rmsNorm(NormKind::Fp32Compute, project(gated, projection_), norm_, eps_);
}

}  // namespace dfi::engine
