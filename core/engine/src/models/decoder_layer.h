#pragma once
// One pre-norm decoder layer of any supported family (docs/qwen.md 1.5):
//   h = x + Mixer(input_layernorm(x));  y = h + MLP(post_attention_layernorm(h))
// where the mixer is softmax attention (full or sliding) or Gated DeltaNet and the MLP is
// SwiGLU (DenseMlp, with biases for Llama's mlp_bias), a mixture of SwiGLU experts
// (SparseMoeMlp) or gpt-oss's clamped experts (GptOssMlp). Every MLP kind has
// `at::Tensor forward(const at::Tensor& x, ExpertRouting* routing) const`.

#include <optional>
#include <variant>

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/target_config.h"
#include "io/weight_loader.h"
#include "models/attention.h"
#include "models/dense_mlp.h"
#include "models/expert_routing.h"
#include "models/gated_delta_net.h"
#include "models/gpt_oss_mlp.h"
#include "models/sparse_moe_mlp.h"

namespace dfi::engine {

class ModelCache;

class DecoderLayer {
 public:
  DecoderLayer(const WeightLoader& weights, const modelspec::TargetConfig& config, int index, at::Device device);

  // x on device(); `angles` for the new positions (unused by linear layers). With `routing`, a
  // mixture-of-experts MLP records its choice there (a dense one leaves it undefined).
  at::Tensor forward(const at::Tensor& x, const RotaryAngles& angles, ModelCache* cache, bool rewindable,
                     ExpertRouting* routing = nullptr) const;

  at::Device device() const { return device_; }
  bool isLinear() const { return linear_.has_value(); }
  bool hasExperts() const { return !std::holds_alternative<DenseMlp>(mlp_); }

 private:
  int index_;
  at::Device device_;
  NormKind norm_;
  double eps_;
  std::optional<Attention> attention_;
  std::optional<GatedDeltaNet> linear_;
  at::Tensor inputNorm_, postNorm_;
  std::variant<DenseMlp, SparseMoeMlp, GptOssMlp> mlp_;
};

// The loader for a norm weight of that kind: fp32 for gpt-oss (transformers keeps those in
// fp32 at any dtype), otherwise `weights` itself.
WeightLoader normWeightLoader(const WeightLoader& weights, NormKind kind);

}  // namespace dfi::engine
