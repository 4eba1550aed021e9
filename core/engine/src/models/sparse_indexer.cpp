#include "models/sparse_indexer.h"

#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "io/weight_loader.h"
#include "kernels/projection.h"
#include "models/latent_attention.h"

namespace dfi::engine {

SparseIndexer::SparseIndexer(const WeightLoader& weights, const std::string& prefix, const SparseIndexerDims& dims,
                             at::Device device)
    : dims_(dims) {
  const int64_t h = dims.hiddenSize, d = dims.headDim;
  wqB_ = weights.load(prefix + "wq_b.weight", {dims.numHeads * d, dims.queryRank}, device);
  wk_ = weights.load(prefix + "wk.weight", {d, h}, device);
  kNormWeight_ = weights.load(prefix + "k_norm.weight", {d}, device);
  kNormBias_ = weights.load(prefix + "k_norm.bias", {d}, device);
  weightsProj_ = weights.load(prefix + "weights_proj.weight", {dims.numHeads, h}, device);
}

at::Tensor SparseIndexer::select(const at::Tensor& x, const at::Tensor& queryResidual, const RotaryAngles& angles,
                                 KvCache* keys, int64_t past) const {
  const int64_t batch = x.size(0), steps = x.size(1), d = dims_.headDim, rope = dims_.ropeDim;
  // Queries [B, T, heads, d] and keys [B, 1, T, d], rotated part first, as the reference lays them out.
  const at::Tensor q = project(queryResidual, wqB_).view({batch, steps, dims_.numHeads, d});
  const at::Tensor qRot = rotateInterleaved(q.narrow(-1, 0, rope).transpose(1, 2), angles).transpose(1, 2);
  const at::Tensor queries = at::cat({qRot, q.narrow(-1, rope, d - rope)}, -1);
  const at::Tensor k = at::layer_norm(project(x, wk_), {d}, kNormWeight_, kNormBias_, 1e-6).unsqueeze(1);
  const at::Tensor newKeys = at::cat({rotateInterleaved(k.narrow(-1, 0, rope), angles), k.narrow(-1, rope, d - rope)}, -1);
  const at::Tensor allKeys = keys ? keys->append(newKeys, at::Tensor()).first : newKeys;  // [B, 1, S, d]
  const int64_t total = allKeys.size(2);

  // scores [B, T, heads, S] in fp32; index [B, T, S].
  const at::Tensor scores =
      at::relu(at::matmul(queries.to(at::kFloat), allKeys.squeeze(1).transpose(-1, -2).to(at::kFloat).unsqueeze(1)) *
               std::pow(static_cast<double>(d), -0.5));
  const at::Tensor weights = project(x, weightsProj_).to(at::kFloat) * std::pow(static_cast<double>(dims_.numHeads), -0.5);
  at::Tensor index = at::matmul(weights.unsqueeze(-2), scores).squeeze(-2);
  const auto opts = at::TensorOptions().dtype(at::kLong).device(x.device());
  const at::Tensor allowed = at::arange(0, total, opts).unsqueeze(0) <= at::arange(past, past + steps, opts).unsqueeze(1);
  index = index.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  return std::get<1>(index.topk(std::min<int64_t>(dims_.topk, total), -1));
}

}  // namespace dfi::engine
