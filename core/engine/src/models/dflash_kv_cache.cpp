#include "models/dflash_kv_cache.h"

#include <algorithm>
#include <string>

#include <ATen/ops/empty.h>

#include "dfi/base/error.h"

namespace dfi::engine {

DrafterKvCache::DrafterKvCache(int numLayers)
    : keys_(static_cast<std::size_t>(numLayers)),
      values_(static_cast<std::size_t>(numLayers)),
      layerLength_(static_cast<std::size_t>(numLayers), 0) {}

void DrafterKvCache::reserve(std::size_t layer, std::int64_t rows, const at::Tensor& like) {
  at::Tensor& k = keys_[layer];
  if (k.defined() && k.size(1) >= rows) return;
  const std::int64_t capacity = std::max(rows, k.defined() ? 2 * k.size(1) : rows);
  const std::int64_t held = layerLength_[layer];
  for (at::Tensor* storage : {&keys_[layer], &values_[layer]}) {
    at::Tensor grown = at::empty({like.size(0), capacity, like.size(2)}, like.options());
    if (held > 0) grown.narrow(1, 0, held).copy_(storage->narrow(1, 0, held));
    *storage = std::move(grown);
  }
}

std::pair<at::Tensor, at::Tensor> DrafterKvCache::write(std::size_t layer, const at::Tensor& keys,
                                                        const at::Tensor& values) {
  const std::int64_t from = layerLength_[layer], rows = keys.size(1);
  reserve(layer, from + rows, keys);
  keys_[layer].narrow(1, from, rows).copy_(keys);
  values_[layer].narrow(1, from, rows).copy_(values);
  return {keys_[layer].narrow(1, 0, from + rows), values_[layer].narrow(1, 0, from + rows)};
}

void DrafterKvCache::append(int layer, const at::Tensor& keys, const at::Tensor& values) {
  const auto i = static_cast<std::size_t>(layer);
  write(i, keys, values);
  layerLength_[i] += keys.size(1);
}

std::pair<at::Tensor, at::Tensor> DrafterKvCache::withBlock(int layer, const at::Tensor& blockKeys,
                                                            const at::Tensor& blockValues) {
  return write(static_cast<std::size_t>(layer), blockKeys, blockValues);
}

at::Tensor DrafterKvCache::keys(int layer) const {
  const auto i = static_cast<std::size_t>(layer);
  return keys_.at(i).defined() ? keys_[i].narrow(1, 0, layerLength_[i]) : at::Tensor();
}

at::Tensor DrafterKvCache::values(int layer) const {
  const auto i = static_cast<std::size_t>(layer);
  return values_.at(i).defined() ? values_[i].narrow(1, 0, layerLength_[i]) : at::Tensor();
}

void DrafterKvCache::crop(std::int64_t keep) {
  if (keep < 0 || keep > length())
    throw UsageError("cannot crop the drafter cache to " + std::to_string(keep) +
                     " positions: it holds " + std::to_string(length()));
  std::fill(layerLength_.begin(), layerLength_.end(), keep);
}

}  // namespace dfi::engine
