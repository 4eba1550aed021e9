#pragma once
// The drafter's KV cache: per layer, the RoPE'd keys and the values of the committed context
// only (spec-dflash 2.4). Block keys and values are computed transiently inside each draft
// call and never stored, so after a call the cache already holds exactly the committed
// context; crop() moves it back to an earlier position (a re-draft at an older anchor).

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace dfi::engine {

class DrafterKvCache {
 public:
  explicit DrafterKvCache(int numLayers);

  // Number of context positions held (0 .. length()-1); equal in every layer.
  std::int64_t length() const { return length_; }
  int numLayers() const { return static_cast<int>(keys_.size()); }

  // keys, values: [kvHeads, S, headDim] for positions length() .. length()+S-1 of `layer`.
  // The length grows once the last layer has appended (a call appends to every layer).
  void append(int layer, const at::Tensor& keys, const at::Tensor& values);
  // Undefined tensors while empty.
  const at::Tensor& keys(int layer) const { return keys_.at(static_cast<std::size_t>(layer)); }
  const at::Tensor& values(int layer) const { return values_.at(static_cast<std::size_t>(layer)); }

  // Keeps positions 0 .. length-1; throws dfi::UsageError when length > length().
  void crop(std::int64_t length);

 private:
  std::vector<at::Tensor> keys_;
  std::vector<at::Tensor> values_;
  std::int64_t length_ = 0;
};

}  // namespace dfi::engine
