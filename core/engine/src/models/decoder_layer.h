#pragma once
// One pre-norm decoder layer of any supported family (spec-qwen 1.5):
//   h = x + Mixer(input_layernorm(x));  y = h + MLP(post_attention_layernorm(h))
// where the mixer is softmax attention or Gated DeltaNet and the MLP is SwiGLU.

#include <optional>

#include <ATen/core/Tensor.h>

#include "dfi/tensorfile/target_config.h"
#include "models/attention.h"
#include "models/gated_delta_net.h"

namespace dfi::engine {

class ModelCache;

class DecoderLayer {
 public:
  DecoderLayer(const WeightLoader& weights, const tensorfile::TargetConfig& config, int index, at::Device device);

  // x on device(); `angles` for the new positions (unused by linear layers).
  at::Tensor forward(const at::Tensor& x, const RotaryAngles& angles, ModelCache* cache, bool rewindable) const;

  at::Device device() const { return device_; }
  bool isLinear() const { return linear_.has_value(); }

 private:
  int index_;
  at::Device device_;
  NormKind norm_;
  double eps_;
  std::optional<Attention> attention_;
  std::optional<GatedDeltaNet> linear_;
  at::Tensor inputNorm_, postNorm_;
  at::Tensor gateUpProj_, downProj_;  // gate_proj and up_proj stacked
};

// The norm variant of a family: Qwen3's plain w, or the 1+w of Qwen3.5 and Qwen3-Next.
NormKind normKindOf(const tensorfile::TargetConfig& config);

}  // namespace dfi::engine
