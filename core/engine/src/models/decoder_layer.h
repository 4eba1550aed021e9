#pragma once
// One pre-norm decoder layer of any supported family (docs/qwen.md 1.5):
//   h = x + Mixer(input_layernorm(x));  y = h + MLP(post_attention_layernorm(h))
// where the mixer is softmax attention (full or sliding), multi-head latent attention (DeepSeek-V3)
// or Gated DeltaNet and the MLP is
// SwiGLU (DenseMlp, with biases for Llama's mlp_bias), a mixture of SwiGLU experts
// (SparseMoeMlp) or gpt-oss's clamped experts (GptOssMlp). Every MLP kind has
// `at::Tensor forward(const at::Tensor& x, ExpertRouting* routing) const`.
// Gemma 4 (FamilyTraits::sandwichNorms) norms the attention output instead and its
// feed-forward block (Gemma4FeedForward) norms its own input and output:
//   h = x + post_attention_layernorm(Attention(input_layernorm(x)));  y = h + Gemma4FeedForward(h)
// then adds its per-layer input (PerLayerInputGate) and multiplies y by layer_scalar.

#include <optional>
#include <variant>

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/target_config.h"
#include "io/weight_loader.h"
#include "models/attention.h"
#include "models/dense_mlp.h"
#include "models/expert_routing.h"
#include "models/gated_delta_net.h"
#include "models/gemma4_feed_forward.h"
#include "models/gpt_oss_mlp.h"
#include "models/latent_attention.h"
#include "models/per_layer_inputs.h"
#include "models/sparse_moe_mlp.h"

namespace dfi::engine {

class ModelCache;

class DecoderLayer {
 public:
  DecoderLayer(const WeightLoader& weights, const modelspec::TargetConfig& config, int index, at::Device device);

  // x on device(); `angles` for the new positions (unused by linear layers). With `routing`, a
  // mixture-of-experts MLP records its choice there (a dense one leaves it undefined).
  // `perLayerInput` [B, T, P]: this layer's per-layer input (Gemma 4), undefined without.
  // `keySelection`: GLM-5's sparse-attention key choice, carried from layer to layer through a
  // forward (a "full" layer writes it, a "shared" one reads it).
  at::Tensor forward(const at::Tensor& x, const RotaryAngles& angles, ModelCache* cache, bool rewindable,
                     ExpertRouting* routing = nullptr, const at::Tensor& perLayerInput = {},
                     at::Tensor* keySelection = nullptr) const;

  at::Device device() const { return device_; }
  bool isLinear() const { return linear_.has_value(); }
  bool hasExperts() const;

 private:
  at::Tensor feedForward(const at::Tensor& h, ExpertRouting* routing) const;

  int index_;
  int kvSource_;  // the layer whose KV cache the attention reads (index_ unless KV-shared)
  at::Device device_;
  NormKind norm_;
  double eps_;
  std::optional<Attention> attention_;
  std::optional<MultiHeadLatentAttention> latentAttention_;  // DeepSeek-V3's, in place of attention_
  std::optional<GatedDeltaNet> linear_;
  at::Tensor inputNorm_, postNorm_;  // postNorm_: the MLP input's, or with sandwich norms the attention output's
  bool sandwichNorms_;
  std::variant<DenseMlp, SparseMoeMlp, GptOssMlp, Gemma4FeedForward> mlp_;
  std::optional<PerLayerInputGate> perLayerInput_;
  at::Tensor layerScalar_;  // [1], Gemma 4; undefined elsewhere
};

// The loader for a norm weight of that kind: fp32 for gpt-oss (transformers keeps those in
// fp32 at any dtype), otherwise `weights` itself.
WeightLoader normWeightLoader(const WeightLoader& weights, NormKind kind);

}  // namespace dfi::engine
