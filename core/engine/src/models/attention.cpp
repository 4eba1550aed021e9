#include "models/attention.h"

#include <cmath>
#include <tuple>

#include <ATen/ATen.h>

#include "io/weight_loader.h"
#include "kernels/projection.h"

namespace dfi::engine {

std::pair<at::Tensor, at::Tensor> KvCache::append(const at::Tensor& k, const at::Tensor& v) {
  const int64_t needed = length_ + k.size(2);
  if (!keys_.defined() || needed > keys_.size(2)) {
    const int64_t capacity = std::max<int64_t>(needed, keys_.defined() ? 2 * keys_.size(2) : 0);
    auto grow = [&](const at::Tensor& old, const at::Tensor& like) {
      at::Tensor storage = at::empty({like.size(0), like.size(1), capacity, like.size(3)}, like.options());
      if (length_ > 0) storage.narrow(2, 0, length_).copy_(old.narrow(2, 0, length_));
      return storage;
    };
    keys_ = grow(keys_, k);
    values_ = grow(values_, v);
  }
  keys_.narrow(2, length_, k.size(2)).copy_(k);
  values_.narrow(2, length_, v.size(2)).copy_(v);
  length_ = needed;
  return {keys_.narrow(2, 0, length_), values_.narrow(2, 0, length_)};
}

Attention::Attention(const WeightLoader& weights, const std::string& prefix, const AttentionDims& dims,
                     at::Device device)
    : dims_(dims) {
  const int64_t h = dims.hiddenSize, hd = dims.headDim;
  const int64_t qRows = dims.numHeads * hd * (dims.outputGate ? 2 : 1);
  const int64_t kvRows = dims.numKvHeads * hd;
  // q, k and v as one [qRows + 2 kvRows, h] product: one GEMM per layer instead of three.
  qkvProj_ = at::cat({weights.load(prefix + "q_proj.weight", {qRows, h}, device),
                      weights.load(prefix + "k_proj.weight", {kvRows, h}, device),
                      weights.load(prefix + "v_proj.weight", {kvRows, h}, device)});
  oProj_ = weights.load(prefix + "o_proj.weight", {h, dims.numHeads * hd}, device);
  if (dims.bias) {
    qkvBias_ = at::cat({weights.load(prefix + "q_proj.bias", {qRows}, device),
                        weights.load(prefix + "k_proj.bias", {kvRows}, device),
                        weights.load(prefix + "v_proj.bias", {kvRows}, device)});
    oBias_ = weights.load(prefix + "o_proj.bias", {h}, device);
  }
  qNorm_ = weights.load(prefix + "q_norm.weight", {hd}, device);
  kNorm_ = weights.load(prefix + "k_norm.weight", {hd}, device);
}

at::Tensor Attention::forward(const at::Tensor& x, const RotaryAngles& angles, KvCache* cache) const {
  const int64_t batch = x.size(0), steps = x.size(1), hd = dims_.headDim;
  const int64_t kvRows = dims_.numKvHeads * hd, qRows = qkvProj_.size(0) - 2 * kvRows;
  const at::Tensor qkv = project(x, qkvProj_, qkvBias_);
  at::Tensor q = qkv.narrow(-1, 0, qRows);
  at::Tensor gate;
  if (dims_.outputGate) {
    // Per head the rows are [query (hd) | gate (hd)], not all queries then all gates.
    const at::Tensor qg = q.view({batch, steps, dims_.numHeads, 2 * hd});
    q = qg.narrow(-1, 0, hd);
    gate = qg.narrow(-1, hd, hd).reshape({batch, steps, dims_.numHeads * hd});
  }
  q = rmsNorm(dims_.norm, q.reshape({batch, steps, dims_.numHeads, hd}), qNorm_, dims_.eps).transpose(1, 2);
  at::Tensor k = rmsNorm(dims_.norm, qkv.narrow(-1, qRows, kvRows).view({batch, steps, dims_.numKvHeads, hd}),
                         kNorm_, dims_.eps)
                     .transpose(1, 2);
  at::Tensor v = qkv.narrow(-1, qRows + kvRows, kvRows).view({batch, steps, dims_.numKvHeads, hd}).transpose(1, 2);
  q = Rotary::apply(q, angles);
  k = Rotary::apply(k, angles);

  const int64_t past = cache ? cache->length() : 0;
  if (cache) std::tie(k, v) = cache->append(k, v);
  // Causal: new token t (absolute position past + t) sees keys 0 .. past + t. Without a cached
  // prefix that is SDPA's is_causal; with one (and more than one new token) it needs a mask.
  at::Tensor mask;
  bool causal = false;
  if (steps > 1 && past == 0) {
    causal = true;
  } else if (steps > 1) {
    const auto opts = at::TensorOptions().dtype(at::kLong).device(x.device());
    const at::Tensor rows = at::arange(past, past + steps, opts).unsqueeze(1);
    mask = at::arange(past + steps, opts).unsqueeze(0) <= rows;  // [T, S] bool, true = attend
  }
  const bool grouped = dims_.numKvHeads != dims_.numHeads;
  const at::Tensor o = at::scaled_dot_product_attention(
      q, k, v, mask.defined() ? std::optional<at::Tensor>(mask) : std::nullopt, 0.0, causal,
                                                        1.0 / std::sqrt(static_cast<double>(hd)), grouped);
  at::Tensor merged = o.transpose(1, 2).reshape({batch, steps, dims_.numHeads * hd});
  if (dims_.outputGate) merged = merged * at::sigmoid(gate);
  return project(merged, oProj_, oBias_);
}

}  // namespace dfi::engine
