#pragma once
// Gemma 4's per-layer inputs (PLE, hidden_size_per_layer_input P): besides the residual
// stream, every decoder layer gets a P-wide input of its own, made once per forward from the
// token ids and their embeddings (Gemma4TextModel.get_per_layer_inputs and
// project_per_layer_inputs):
//   e = embed_tokens_per_layer(ids) * sqrt(P)                          [B, T, L, P]
//   c = per_projection_norm(per_layer_model_projection(x) * hidden^-0.5)  [B, T, L, P]
//   inputs = (c + e) * 2^-0.5
// and each layer, after its feed-forward block, adds (PerLayerInputGate)
//   y += post_per_layer_input_norm(per_layer_projection(gelu_tanh(per_layer_input_gate y) * input)).

#include <string>

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/target_config.h"

namespace dfi::engine {

class WeightLoader;

class PerLayerInputs {
 public:
  PerLayerInputs(const WeightLoader& weights, const modelspec::TargetConfig& config, at::Device device);

  // ids [B, T]; embeddings [B, T, H] (already scaled, as the decoder stack receives them).
  // Returns [B, T, L, P]; layer i's input is [:, :, i].
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& embeddings) const;

 private:
  int numLayers_, width_;
  double eps_;
  at::Tensor embedding_, embeddingScale_, projection_, projectionNorm_;
};

class PerLayerInputGate {
 public:
  // `prefix` is the layer's ("model.layers.<i>.").
  PerLayerInputGate(const WeightLoader& weights, const std::string& prefix, const modelspec::TargetConfig& config,
                    at::Device device);

  // y [B, T, H] the layer's output so far, input [B, T, P] its per-layer input.
  at::Tensor forward(const at::Tensor& y, const at::Tensor& input) const;

 private:
  double eps_;
  at::Tensor gate_, projection_, norm_;
};

// transformers' Gemma4TextScaledWordEmbedding scale: a buffer cast to the weights' dtype before it
// multiplies (sqrt(3072) = 55.4256 becomes 55.5 in bf16), as a 0-dim tensor of that dtype.
at::Tensor embeddingScale(double scale, at::ScalarType dtype, at::Device device);

}  // namespace dfi::engine
