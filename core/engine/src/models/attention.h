#pragma once
// Softmax attention of a decoder layer: Qwen3's (per-head q/k RMSNorm, full rotary), the gated
// variant of Qwen3.5 / Qwen3-Next (query and output gate interleaved per head in q_proj,
// zero-centred q/k norms, partial rotary, o_proj(o * sigmoid(gate))), Llama's (no q/k norm),
// gpt-oss's (a learned sink logit per head joins every softmax and is dropped after it),
// MiniMax-M2's (one q and one k RMSNorm over all heads' channels, partial rotary) and
// Gemma 4's (unscaled scores, a weightless value norm, values that are the key projection on
// k_eq_v layers, and layers that attend over an earlier layer's keys and values).
// GQA throughout; a sliding window limits each query to the last `window` keys, itself included.

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include <ATen/core/Tensor.h>

#include "kernels/norms.h"
#include "kernels/rotary.h"

namespace dfi::engine {

class WeightLoader;

struct AttentionDims {
  int hiddenSize = 0;
  int numHeads = 0;
  int numKvHeads = 0;
  int headDim = 0;
  bool outputGate = false;  // Qwen3.5 / Next
  bool bias = false;        // attention_bias: q/k/v biases, and o's with outputBias
  bool outputBias = true;   // false for GLM-4.5, whose attention_bias leaves o_proj without one
  bool qkNorm = true;       // per-head q/k RMSNorm (Qwen families; not Llama or gpt-oss)
  bool qkNormAcrossHeads = false;  // with qkNorm: over all heads at once, before the split (MiniMax-M2)
  bool sinks = false;       // gpt-oss attention sinks
  int slidingWindow = 0;    // 0: full attention
  NormKind norm = NormKind::Plain;
  double eps = 1e-6;
  bool unitScale = false;    // Gemma 4: scores q.k, not q.k / sqrt(head_dim)
  bool valueNorm = false;    // Gemma 4: weightless RMSNorm on the values
  bool valueIsKey = false;   // Gemma 4 attention_k_eq_v: no v_proj, v is the raw key projection
  bool sharedKv = false;     // Gemma 4 KV-shared layer: only q_proj, q_norm and o_proj of its own
};

// Post-norm, post-RoPE keys and post-projection values of one layer. Storage grows by
// doubling, so a decode or verification step writes only its new tokens instead of copying
// the whole cache, and cropping just moves the length back.
class KvCache {
 public:
  int64_t length() const { return length_; }
  void crop(int64_t length) { length_ = std::min(length_, length); }

  // k, v: [B, nkv, T, hd]. Returns views of all cached keys and values including them. A cache
  // of keys alone (GLM-5's indexer) is given undefined values and returns undefined ones.
  std::pair<at::Tensor, at::Tensor> append(const at::Tensor& k, const at::Tensor& v);
  // Views of every cached key and value (what a KV-shared layer attends over).
  std::pair<at::Tensor, at::Tensor> contents() const;

 private:
  at::Tensor keys_, values_;  // [B, nkv, capacity, hd]; the first length_ positions are valid
  int64_t length_ = 0;
};

class Attention {
 public:
  Attention(const WeightLoader& weights, const std::string& prefix, const AttentionDims& dims, at::Device device);

  // x: [B, T, H] (already input-normed). `angles` cover the T new positions, which start at
  // cache->length() (0 without a cache). Appends to the cache when given.
  at::Tensor forward(const at::Tensor& x, const RotaryAngles& angles, KvCache* cache) const;

 private:
  AttentionDims dims_;
  // Queries, keys and values from the projection of x (no keys or values on a KV-shared layer).
  std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> projectQkv(const at::Tensor& x,
                                                                        const RotaryAngles& angles) const;

  at::Tensor qkvProj_, oProj_;  // q_proj, k_proj and v_proj stacked (as many as the layer has)
  at::Tensor qkvBias_, oBias_;  // undefined without attention_bias (oBias_ also without outputBias)
  at::Tensor qNorm_, kNorm_;  // undefined without q/k norm
  at::Tensor valueNorm_;      // ones: the weightless value norm, undefined without one
  at::Tensor sinks_;          // [heads], undefined without sinks
};

}  // namespace dfi::engine
