#include "models/attention.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

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
    if (v.defined()) values_ = grow(values_, v);
  }
  keys_.narrow(2, length_, k.size(2)).copy_(k);
  if (v.defined()) values_.narrow(2, length_, v.size(2)).copy_(v);
  length_ = needed;
  return contents();
}

std::pair<at::Tensor, at::Tensor> KvCache::contents() const {
  return {keys_.narrow(2, 0, length_), values_.defined() ? values_.narrow(2, 0, length_) : at::Tensor()};
}

Attention::Attention(const WeightLoader& weights, const std::string& prefix, const AttentionDims& dims,
                     at::Device device)
    : dims_(dims) {
  const int64_t h = dims.hiddenSize, hd = dims.headDim;
  const int64_t qRows = dims.numHeads * hd * (dims.outputGate ? 2 : 1);
  const int64_t kvRows = dims.numKvHeads * hd;
  // q, k and v as one [qRows + 2 kvRows, h] product: one GEMM per layer instead of three (the
  // layer's own projections only: no v on k_eq_v layers, neither k nor v on KV-shared ones).
  std::vector<std::string> names{"q_proj"};
  std::vector<int64_t> rows{qRows};
  if (!dims.sharedKv) {
    names.push_back("k_proj");
    rows.push_back(kvRows);
    if (!dims.valueIsKey) {
      names.push_back("v_proj");
      rows.push_back(kvRows);
    }
  }
  std::vector<at::Tensor> projections, biases;
  for (std::size_t i = 0; i < names.size(); ++i) {
    projections.push_back(weights.load(prefix + names[i] + ".weight", {rows[i], h}, device));
    if (dims.bias) biases.push_back(weights.load(prefix + names[i] + ".bias", {rows[i]}, device));
  }
  qkvProj_ = at::cat(projections);
  oProj_ = weights.load(prefix + "o_proj.weight", {h, dims.numHeads * hd}, device);
  if (dims.bias) {
    qkvBias_ = at::cat(biases);
    if (dims.outputBias) oBias_ = weights.load(prefix + "o_proj.bias", {h}, device);
  }
  if (dims.qkNorm) {
    qNorm_ = weights.load(prefix + "q_norm.weight", {dims.qkNormAcrossHeads ? dims.numHeads * hd : hd}, device);
    if (!dims.sharedKv) kNorm_ = weights.load(prefix + "k_norm.weight", {dims.qkNormAcrossHeads ? kvRows : hd}, device);
  }
  if (dims.valueNorm) valueNorm_ = at::ones({hd}, at::TensorOptions().dtype(weights.dtype()).device(device));
  if (dims.sinks) sinks_ = weights.load(prefix + "sinks", {dims.numHeads}, device);
}

namespace {

// transformers' eager attention with sinks (gpt-oss), op for op so that bf16 rounds alike:
// scores = q k^T * scale (+ mask), the head's sink logit appended as one more column, the row
// max subtracted, softmax in the scores' dtype, the sink column dropped, then p v. Query rows
// are independent, so a long prefill runs them in chunks: the scores of a 32k-token prompt
// would otherwise be heads x 32k x 32k at once.
at::Tensor attendWithSinks(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const at::Tensor& allowed, const at::Tensor& sinks, double scale) {
  constexpr int64_t kQueryRowsPerChunk = 256;  // the 512-position oracle runs two chunks
  const int64_t batch = q.size(0), heads = q.size(1), kvHeads = k.size(1);
  const int64_t groups = heads / kvHeads;
  // Grouped-query attention without copying the cache per query head: the `groups` query heads
  // of a key/value head are stacked as rows of one product against that head's keys.
  auto byKvHead = [&](const at::Tensor& t) { return t.reshape({batch, kvHeads, groups * t.size(2), t.size(3)}); };
  auto byHead = [&](const at::Tensor& t, int64_t rows) { return t.view({batch, heads, rows, t.size(-1)}); };
  const at::Tensor keysT = k.transpose(2, 3);
  const at::Tensor sinkLogits = sinks.to(q.scalar_type()).view({1, -1, 1, 1});
  std::vector<at::Tensor> outputs;
  for (int64_t start = 0; start < q.size(2); start += kQueryRowsPerChunk) {
    const int64_t rows = std::min(kQueryRowsPerChunk, q.size(2) - start);
    at::Tensor scores = byHead(at::matmul(byKvHead(q.narrow(2, start, rows)), keysT), rows) * scale;
    if (allowed.defined())
      scores = scores.masked_fill(allowed.narrow(0, start, rows).logical_not(), -std::numeric_limits<double>::infinity());
    at::Tensor combined = at::cat({scores, sinkLogits.expand({batch, -1, rows, 1})}, -1);
    combined = combined - std::get<0>(combined.max(-1, /*keepdim=*/true));
    const at::Tensor probs = at::softmax(combined, -1, combined.scalar_type());
    const at::Tensor kept = probs.narrow(-1, 0, scores.size(-1)).to(v.scalar_type());
    outputs.push_back(byHead(at::matmul(byKvHead(kept), v), rows));
  }
  return outputs.size() == 1 ? outputs.front() : at::cat(outputs, 2);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> Attention::projectQkv(const at::Tensor& x,
                                                                                  const RotaryAngles& angles) const {
  const int64_t batch = x.size(0), steps = x.size(1), hd = dims_.headDim;
  const int64_t kvRows = dims_.sharedKv ? 0 : dims_.numKvHeads * hd;
  const int64_t qRows = qkvProj_.size(0) - (dims_.sharedKv ? 0 : dims_.valueIsKey ? kvRows : 2 * kvRows);
  const at::Tensor qkv = project(x, qkvProj_, qkvBias_);
  at::Tensor q = qkv.narrow(-1, 0, qRows);
  // MiniMax-M2 norms q and k once over every head's channels, before the split into heads.
  const bool normAcrossHeads = dims_.qkNorm && dims_.qkNormAcrossHeads;
  const bool normPerHead = dims_.qkNorm && !dims_.qkNormAcrossHeads;
  if (normAcrossHeads) q = rmsNorm(dims_.norm, q, qNorm_, dims_.eps);
  at::Tensor gate;
  if (dims_.outputGate) {
    // Per head the rows are [query (hd) | gate (hd)], not all queries then all gates.
    const at::Tensor qg = q.view({batch, steps, dims_.numHeads, 2 * hd});
    q = qg.narrow(-1, 0, hd);
    gate = qg.narrow(-1, hd, hd).reshape({batch, steps, dims_.numHeads * hd});
  }
  q = q.reshape({batch, steps, dims_.numHeads, hd});
  if (normPerHead) q = rmsNorm(dims_.norm, q, qNorm_, dims_.eps);
  q = Rotary::apply(q.transpose(1, 2), angles);
  if (dims_.sharedKv) return {q, at::Tensor(), at::Tensor(), gate};

  const at::Tensor keyRows = qkv.narrow(-1, qRows, kvRows).view({batch, steps, dims_.numKvHeads, hd});
  at::Tensor k = keyRows;
  if (normAcrossHeads)
    k = rmsNorm(dims_.norm, qkv.narrow(-1, qRows, kvRows), kNorm_, dims_.eps).view({batch, steps, dims_.numKvHeads, hd});
  if (normPerHead) k = rmsNorm(dims_.norm, keyRows, kNorm_, dims_.eps);
  // attention_k_eq_v: the values are the key projection before its norm and rotation.
  at::Tensor v = dims_.valueIsKey ? keyRows : qkv.narrow(-1, qRows + kvRows, kvRows).view({batch, steps, dims_.numKvHeads, hd});
  if (dims_.valueNorm) v = rmsNorm(dims_.norm, v, valueNorm_, dims_.eps);
  return {q, Rotary::apply(k.transpose(1, 2), angles), v.transpose(1, 2), gate};
}

at::Tensor Attention::forward(const at::Tensor& x, const RotaryAngles& angles, KvCache* cache) const {
  const int64_t batch = x.size(0), steps = x.size(1), hd = dims_.headDim;
  auto [q, k, v, gate] = projectQkv(x, angles);
  int64_t past = cache ? cache->length() : 0;
  if (dims_.sharedKv) {
    std::tie(k, v) = cache->contents();  // the source layer already appended these positions
    past -= steps;
  } else if (cache) {
    std::tie(k, v) = cache->append(k, v);
  }
  // New token t (absolute position past + t) sees keys from past + t - window + 1 (or 0) to
  // past + t. A sliding layer's cache keeps every key (rollback is a crop, as for full layers)
  // but only the keys some new token can see take part.
  const int64_t window = dims_.slidingWindow;
  const int64_t firstKey = window > 0 ? std::max<int64_t>(0, past - window + 1) : 0;
  if (firstKey > 0) {
    k = k.narrow(2, firstKey, k.size(2) - firstKey);
    v = v.narrow(2, firstKey, v.size(2) - firstKey);
  }
  const bool windowCuts = window > 0 && past + steps > window;
  // Without a cached prefix and without a window cut the causal mask is SDPA's is_causal;
  // otherwise (and for sinks, which use no SDPA) an explicit [T, S] mask, true = attend.
  at::Tensor mask;
  const bool needMask = (steps > 1 && past > 0) || windowCuts || (dims_.sinks && steps > 1);
  if (needMask) {
    const auto opts = at::TensorOptions().dtype(at::kLong).device(x.device());
    const at::Tensor rows = at::arange(past, past + steps, opts).unsqueeze(1);
    const at::Tensor cols = at::arange(firstKey, past + steps, opts).unsqueeze(0);
    mask = cols <= rows;
    if (window > 0) mask = mask.logical_and(cols > rows - window);
  }
  // head_dim**-0.5, as transformers; Gemma 4 leaves the normed q.k unscaled (scaling = 1.0).
  const double scale = dims_.unitScale ? 1.0 : std::pow(static_cast<double>(hd), -0.5);
  at::Tensor o;
  if (dims_.sinks) {
    o = attendWithSinks(q, k, v, mask, sinks_, scale);
  } else {
    const bool grouped = dims_.numKvHeads != dims_.numHeads;
    const bool causal = steps > 1 && !mask.defined();
    o = at::scaled_dot_product_attention(q, k, v, mask.defined() ? std::optional<at::Tensor>(mask) : std::nullopt,
                                         0.0, causal, scale, grouped);
  }
  at::Tensor merged = o.transpose(1, 2).reshape({batch, steps, dims_.numHeads * hd});
  if (dims_.outputGate) merged = merged * at::sigmoid(gate);
  return project(merged, oProj_, oBias_);
}

}  // namespace dfi::engine
