#pragma once
// DeepSeek sparse attention's indexer as GLM-5 runs it (transformers' GlmMoeDsaIndexer): which of
// the keys the causal mask allows each query attends to. Queries come from the attention's q LoRA
// output (wq_b, index_n_heads heads of index_head_dim), one key per token from the layer input
// (wk, then a LayerNorm with bias), both rotated on their first qk_rope_head_dim channels in
// DeepSeek's interleaved layout; a query's score of a key is sum_h w_h relu(q_h . k) / sqrt(d), with
// w = weights_proj(x) / sqrt(heads), computed in fp32; the topk best keys are chosen. The keys are
// cached (one KvCache of keys alone) so a decode step scores every earlier token.

#include <string>

#include <ATen/core/Tensor.h>

#include "kernels/rotary.h"
#include "models/attention.h"

namespace dfi::engine {

class WeightLoader;

struct SparseIndexerDims {
  int hiddenSize = 0;
  int queryRank = 0;  // q_lora_rank: the width of the attention's normed q LoRA output
  int numHeads = 0;
  int headDim = 0;
  int ropeDim = 0;  // qk_rope_head_dim
  int topk = 0;
};

class SparseIndexer {
 public:
  SparseIndexer(const WeightLoader& weights, const std::string& prefix, const SparseIndexerDims& dims,
                at::Device device);

  // x [B, T, H] (the attention's input), queryResidual [B, T, q_lora_rank]; the T new tokens start
  // at position `past`. Appends their keys to `keys` when given. Returns [B, T, min(topk, S)] key
  // indices (S = past + T), as torch.topk orders them; while fewer than topk keys are allowed the
  // choice includes masked ones, which the causal mask still excludes.
  at::Tensor select(const at::Tensor& x, const at::Tensor& queryResidual, const RotaryAngles& angles, KvCache* keys,
                    int64_t past) const;

 private:
  SparseIndexerDims dims_;
  at::Tensor wqB_, wk_, kNormWeight_, kNormBias_, weightsProj_;
};

}  // namespace dfi::engine
