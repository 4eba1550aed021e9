#include "models/latent_attention.h"

#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/weight_loader.h"
#include "kernels/norms.h"
#include "kernels/projection.h"

namespace dfi::engine {

double latentAttentionScale(const modelspec::RopeConfig& rope, int qkHeadDim) {
  double scale = std::pow(static_cast<double>(qkHeadDim), -0.5);
  if (rope.type != "default" && rope.mscaleAllDim && *rope.mscaleAllDim != 0) {
    const double mscale = rope.factor <= 1 ? 1.0 : 0.1 * *rope.mscaleAllDim * std::log(rope.factor) + 1.0;
    scale *= mscale * mscale;
  }
  return scale;
}

MultiHeadLatentAttention::MultiHeadLatentAttention(const WeightLoader& weights, const std::string& prefix,
                                                   const LatentAttentionDims& dims, double scale, at::Device device)
    : dims_(dims), scale_(scale) {
  const modelspec::LatentAttention& s = dims.shape;
  const int64_t h = dims.hiddenSize, heads = dims.numHeads;
  const int64_t qRows = heads * s.qkHeadDim();
  if (s.qLoraRank > 0) {
    qAProj_ = weights.load(prefix + "q_a_proj.weight", {s.qLoraRank, h}, device);
    if (dims.bias) qABias_ = weights.load(prefix + "q_a_proj.bias", {s.qLoraRank}, device);
    qANorm_ = weights.load(prefix + "q_a_layernorm.weight", {s.qLoraRank}, device);
    qProj_ = weights.load(prefix + "q_b_proj.weight", {qRows, s.qLoraRank}, device);
  } else {
    qProj_ = weights.load(prefix + "q_proj.weight", {qRows, h}, device);
  }
  kvAProj_ = weights.load(prefix + "kv_a_proj_with_mqa.weight", {s.kvLoraRank + s.qkRopeHeadDim, h}, device);
  if (dims.bias) kvABias_ = weights.load(prefix + "kv_a_proj_with_mqa.bias", {s.kvLoraRank + s.qkRopeHeadDim}, device);
  kvANorm_ = weights.load(prefix + "kv_a_layernorm.weight", {s.kvLoraRank}, device);
  kvBProj_ = weights.load(prefix + "kv_b_proj.weight", {heads * (s.qkNopeHeadDim + s.vHeadDim), s.kvLoraRank}, device);
  oProj_ = weights.load(prefix + "o_proj.weight", {h, heads * s.vHeadDim}, device);
  if (dims.bias) oBias_ = weights.load(prefix + "o_proj.bias", {h}, device);
  if (dims.indexer) indexer_.emplace(weights, prefix + "indexer.", *dims.indexer, device);
}

namespace {

// The pairs as rotate-half's halves (evens | odds): rotating that reproduces transformers'
// apply_rotary_pos_emb_interleave value for value, in the same de-interleaved channel order.
at::Tensor deinterleaved(const at::Tensor& x) {
  const int64_t d = x.size(-1);
  std::vector<int64_t> pairs(x.sizes().begin(), x.sizes().end());
  pairs.back() = d / 2;
  pairs.push_back(2);
  return x.reshape(pairs).transpose(-1, -2).reshape(x.sizes());
}

at::Tensor rotated(const at::Tensor& x, const RotaryAngles& angles, bool interleave) {
  return interleave ? rotateInterleaved(x, angles) : Rotary::apply(x, angles);
}

}  // namespace

at::Tensor rotateInterleaved(const at::Tensor& x, const RotaryAngles& angles) {
  return Rotary::apply(deinterleaved(x), angles);
}

std::pair<at::Tensor, at::Tensor> MultiHeadLatentAttention::queries(const at::Tensor& x,
                                                                    const RotaryAngles& angles) const {
  const modelspec::LatentAttention& s = dims_.shape;
  const at::Tensor residual =
      s.qLoraRank > 0 ? rmsNorm(NormKind::Plain, project(x, qAProj_, qABias_), qANorm_, dims_.eps) : at::Tensor();
  const at::Tensor q = project(s.qLoraRank > 0 ? residual : x, qProj_);
  const at::Tensor perHead = q.view({x.size(0), x.size(1), dims_.numHeads, s.qkHeadDim()}).transpose(1, 2);
  const at::Tensor rope = rotated(perHead.narrow(-1, s.qkNopeHeadDim, s.qkRopeHeadDim), angles, s.ropeInterleave);
  return {at::cat({perHead.narrow(-1, 0, s.qkNopeHeadDim), rope}, -1), residual};
}

at::Tensor MultiHeadLatentAttention::forward(const at::Tensor& x, const RotaryAngles& angles, KvCache* cache,
                                             KvCache* indexerKeys, at::Tensor* keySelection) const {
  const modelspec::LatentAttention& s = dims_.shape;
  const int64_t batch = x.size(0), steps = x.size(1), heads = dims_.numHeads;
  const auto [q, queryResidual] = queries(x, angles);

  const at::Tensor compressed = project(x, kvAProj_, kvABias_);
  at::Tensor latent = rmsNorm(NormKind::Plain, compressed.narrow(-1, 0, s.kvLoraRank), kvANorm_, dims_.eps)
                          .reshape({batch, 1, steps, s.kvLoraRank});
  at::Tensor ropeKey =
      rotated(compressed.narrow(-1, s.kvLoraRank, s.qkRopeHeadDim).reshape({batch, 1, steps, s.qkRopeHeadDim}), angles,
              s.ropeInterleave);
  const int64_t past = cache ? cache->length() : 0;
  if (cache) std::tie(latent, ropeKey) = cache->append(latent, ropeKey);
  const int64_t keys = latent.size(2);

  // Every head's position-free key part and value from the latents (transformers' expand_kv).
  const at::Tensor expanded =
      project(latent, kvBProj_).view({batch, keys, heads, s.qkNopeHeadDim + s.vHeadDim}).transpose(1, 2);
  const at::Tensor k =
      at::cat({expanded.narrow(-1, 0, s.qkNopeHeadDim), ropeKey.expand({batch, heads, keys, s.qkRopeHeadDim})}, -1);
  const at::Tensor v = expanded.narrow(-1, s.qkNopeHeadDim, s.vHeadDim);

  // Causal over the cached prefix: SDPA's is_causal without one, an explicit [T, S] mask with one;
  // a sparse layer's [B, 1, T, S] mask also drops every key the indexer did not choose.
  std::optional<at::Tensor> mask;
  const auto opts = at::TensorOptions().dtype(at::kLong).device(x.device());
  auto causal = [&] {
    return at::arange(0, keys, opts).unsqueeze(0) <= at::arange(past, past + steps, opts).unsqueeze(1);
  };
  if (dims_.sparse) {
    if (!keySelection) throw UsageError("a sparse-attention layer needs the forward's key choice", {.item = "keys"});
    if (indexer_) {
      *keySelection = indexer_->select(x, queryResidual, angles, indexerKeys, past);
    } else if (!keySelection->defined()) {
      throw UsageError("a \"shared\" sparse-attention layer runs after the \"full\" layer whose key choice it reuses",
                       {.item = "indexer_types"});
    }
    const at::Tensor chosen =
        at::zeros({batch, steps, keys}, opts.dtype(at::kBool)).scatter(-1, keySelection->to(x.device()), true);
    mask = causal().unsqueeze(0).logical_and(chosen).unsqueeze(1);
  } else if (steps > 1 && past > 0) {
    mask = causal();
  }
  const at::Tensor o = at::scaled_dot_product_attention(q, k, v, mask, 0.0, steps > 1 && !mask, scale_);
  return project(o.transpose(1, 2).reshape({batch, steps, heads * s.vHeadDim}), oProj_, oBias_);
}

}  // namespace dfi::engine
