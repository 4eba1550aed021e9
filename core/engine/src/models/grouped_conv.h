#pragma once
// DFlash2's grouped dynamic causal convolution (dflash 0.1.0's GroupedDynamicCausalConv): along
// a block's rows, each output row is a causal mix of the current and previous K-1 rows, per
// channel group, with a static kernel plus a kernel projected from each row. DFlash2 wraps the
// attention and the MLP of every layer with one: prepare() mixes the sublayer's input and
// returns the dynamic kernels of its output, finish() mixes the output with them.

#include <utility>

#include <ATen/core/Tensor.h>

#include "models/dflash_weights.h"

namespace dfi::engine {

class GroupedDynamicConv {
 public:
  GroupedDynamicConv(const ConvWeights& weights, int groupSize) : w_(weights), groupSize_(groupSize) {}

  // hidden [n, L, H] (n blocks of L rows, mixed within each block only) -> the mixed input,
  // and the dynamic kernels [n, L, K, G] for finish().
  std::pair<at::Tensor, at::Tensor> prepare(const at::Tensor& hidden) const;
  at::Tensor finish(const at::Tensor& hidden, const at::Tensor& dynamic) const;

 private:
  // sum over offsets o < K: (base[o] + dynamic[..., o, g]) * hidden shifted down o rows
  // (zeros above the block's first row).
  at::Tensor convolve(const at::Tensor& hidden, const at::Tensor& dynamic, const at::Tensor& base) const;

  const ConvWeights& w_;
  int groupSize_;
};

}  // namespace dfi::engine
