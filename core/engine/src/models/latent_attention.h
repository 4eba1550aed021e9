#pragma once
// Multi-head latent attention (DeepSeek-V3, Kimi K2; transformers' DeepseekV3Attention), computed
// as transformers computes it: the query through q_a_proj, q_a_layernorm and q_b_proj (or one
// q_proj); kv_a_proj_with_mqa gives each token a latent (normed by kv_a_layernorm) and one rotary
// key shared by every head; the cache keeps exactly those two (modelspec::LatentAttention), so
// a sequence costs kv_lora_rank + qk_rope_head_dim values per token and layer and rollback is a
// crop; every step expands the cached latents by kv_b_proj into each head's position-free key
// part and value. Scores are scaled by qk_head_dim^-0.5 times DeepSeek's YaRN mscale squared.
// GLM-5 restricts each query to the keys a SparseIndexer chooses (its own on "full" layers, the
// previous full layer's choice on "shared" ones).

#include <optional>
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/rope_config.h"
#include "dfi/modelspec/target_config.h"
#include "kernels/rotary.h"
#include "models/attention.h"
#include "models/sparse_indexer.h"

namespace dfi::engine {

class WeightLoader;

struct LatentAttentionDims {
  int hiddenSize = 0;
  int numHeads = 0;
  modelspec::LatentAttention shape;
  bool bias = false;  // attention_bias: q_a_proj, kv_a_proj_with_mqa and o_proj
  double eps = 1e-6;  // q_a_layernorm's and kv_a_layernorm's (DeepseekV3RMSNorm's default)
  // GLM-5: the layer's indexer (a "full" layer), or nullopt; sparse with either value.
  std::optional<SparseIndexerDims> indexer;
  bool sparse = false;
};

// DeepSeek's interleaved rotary pairs (x0, x1), (x2, x3), ... rotated; x [B, heads, T, d]. The
// result is in the reference's de-interleaved order (the pairs' first halves, then their second).
at::Tensor rotateInterleaved(const at::Tensor& x, const RotaryAngles& angles);

// transformers' yarn_apply_mscale: qk_head_dim^-0.5, times mscale(factor, mscale_all_dim)^2 when
// the rope is not "default" and mscale_all_dim is set.
double latentAttentionScale(const modelspec::RopeConfig& rope, int qkHeadDim);

class MultiHeadLatentAttention {
 public:
  MultiHeadLatentAttention(const WeightLoader& weights, const std::string& prefix,
                           const LatentAttentionDims& dims, double scale, at::Device device);

  // x: [B, T, H] (already input-normed); `angles` for the T new positions, which start at
  // cache->length(). The cache holds [B, 1, S, kv_lora_rank] latents as its keys and
  // [B, 1, S, qk_rope_head_dim] rotated keys as its values. A sparse layer reads the key choice
  // from `keySelection` [B, T, k] (a full layer first writes its indexer's there), its indexer
  // caching its keys in `indexerKeys`.
  at::Tensor forward(const at::Tensor& x, const RotaryAngles& angles, KvCache* cache, KvCache* indexerKeys = nullptr,
                     at::Tensor* keySelection = nullptr) const;

 private:
  // The rotated queries [B, heads, T, qk_head_dim] and the normed q LoRA output (undefined without one).
  std::pair<at::Tensor, at::Tensor> queries(const at::Tensor& x, const RotaryAngles& angles) const;

  LatentAttentionDims dims_;
  double scale_;
  at::Tensor qAProj_, qABias_, qANorm_;  // undefined without a q LoRA rank
  at::Tensor qProj_;                     // q_b_proj, or q_proj without a q LoRA rank
  at::Tensor kvAProj_, kvABias_, kvANorm_, kvBProj_;
  at::Tensor oProj_, oBias_;
  std::optional<SparseIndexer> indexer_;
};

}  // namespace dfi::engine
