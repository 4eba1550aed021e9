#include "dflash_kv_cache.h"

#include <string>

#include <ATen/ops/cat.h>

#include "dfi/base/error.h"

namespace dfi::engine {

DrafterKvCache::DrafterKvCache(int numLayers)
    : keys_(static_cast<std::size_t>(numLayers)), values_(static_cast<std::size_t>(numLayers)) {}

void DrafterKvCache::append(int layer, const at::Tensor& keys, const at::Tensor& values) {
  const auto i = static_cast<std::size_t>(layer);
  at::Tensor& k = keys_.at(i);
  at::Tensor& v = values_.at(i);
  k = k.defined() ? at::cat({k, keys}, 1) : keys;
  v = v.defined() ? at::cat({v, values}, 1) : values;
  if (i + 1 == keys_.size()) length_ = k.size(1);
}

void DrafterKvCache::crop(std::int64_t length) {
  if (length < 0 || length > length_)
    throw UsageError("cannot crop the drafter cache to " + std::to_string(length) +
                     " positions: it holds " + std::to_string(length_));
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    // narrow() is a view: the dropped rows are freed by the next append's cat.
    keys_[i] = keys_[i].defined() ? keys_[i].narrow(1, 0, length) : keys_[i];
    values_[i] = values_[i].defined() ? values_[i].narrow(1, 0, length) : values_[i];
  }
  length_ = length;
}

}  // namespace dfi::engine
