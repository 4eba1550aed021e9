#pragma once
// The drafter's KV cache: per layer, the RoPE'd keys and the values of the committed context
// only (docs/dflash.md 2.4). Block keys and values are computed transiently inside each draft
// call and never stored, so after a call the cache already holds exactly the committed
// context; crop() moves it back to an earlier position (a re-draft at an older anchor).

#include <cstdint>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace dfi::engine {

class DrafterKvCache {
 public:
  explicit DrafterKvCache(int numLayers);

  // Number of context positions held (0 .. length()-1); equal in every layer.
  std::int64_t length() const { return layerLength_.empty() ? 0 : layerLength_.back(); }
  int numLayers() const { return static_cast<int>(keys_.size()); }

  // keys, values: [kvHeads, S, headDim] for positions length() .. length()+S-1 of `layer`.
  // The length grows once the last layer has appended (a call appends to every layer).
  void append(int layer, const at::Tensor& keys, const at::Tensor& values);
  // The layer's context, [kvHeads, length(), headDim]; undefined tensors while empty.
  at::Tensor keys(int layer) const;
  at::Tensor values(int layer) const;
  // The layer's context followed by a block's transient keys and values [kvHeads, B, headDim],
  // as [kvHeads, length() + B, headDim] views of the cache's own storage: the block is written
  // after the context without being committed, so no call copies the context (the next append
  // or block overwrites it; use the views before that).
  std::pair<at::Tensor, at::Tensor> withBlock(int layer, const at::Tensor& blockKeys, const at::Tensor& blockValues);

  // Keeps positions 0 .. keep-1; throws dfi::UsageError when keep > length().
  void crop(std::int64_t keep);

 private:
  // Room for `rows` positions in `layer`, keeping what it holds (capacity doubles).
  void reserve(std::size_t layer, std::int64_t rows, const at::Tensor& like);
  // Writes keys/values at positions layerLength_[layer] onwards, returns the views up to their end.
  std::pair<at::Tensor, at::Tensor> write(std::size_t layer, const at::Tensor& keys, const at::Tensor& values);

  std::vector<at::Tensor> keys_;    // per layer: [kvHeads, capacity, headDim] storage
  std::vector<at::Tensor> values_;
  std::vector<std::int64_t> layerLength_;  // context rows held per layer
};

}  // namespace dfi::engine
