#include "models/model_cache.h"

#include <algorithm>
#include <string>

#include "dfi/base/error.h"

namespace dfi::engine {

ModelCache::ModelCache(std::vector<bool> linearLayers)
    : linearLayers_(std::move(linearLayers)),
      anyLinear_(std::find(linearLayers_.begin(), linearLayers_.end(), true) != linearLayers_.end()),
      kv_(linearLayers_.size()),
      indexerKeys_(linearLayers_.size()),
      linear_(linearLayers_.size()) {}

int64_t ModelCache::cropFloor() const {
  if (!anyLinear_) return 0;
  return lastRewindable_ ? lastStart_ : length_;
}

void ModelCache::crop(int64_t length) {
  if (length == length_) return;
  if (length > length_ || length < cropFloor())
    throw UsageError("cannot crop the cache to " + std::to_string(length) + " tokens: it holds " +
                         std::to_string(length_) + " and linear-attention state can only go back to " +
                         std::to_string(cropFloor()) + " (the start of the last rewindable forward)",
                     {.item = "cache"});
  for (size_t i = 0; i < linearLayers_.size(); ++i) {
    if (linearLayers_[i])
      linear_[i].rewind(length - lastStart_);
    else {
      kv_[i].crop(length);
      indexerKeys_[i].crop(length);
    }
  }
  length_ = length;
}

void ModelCache::clear() {
  for (KvCache& kv : kv_) kv = KvCache{};
  for (KvCache& keys : indexerKeys_) keys = KvCache{};
  for (LinearAttentionState& state : linear_) state = LinearAttentionState{};
  length_ = lastStart_ = 0;
  lastRewindable_ = false;
}

void ModelCache::advance(int64_t tokens, bool rewindable) {
  lastStart_ = length_;
  length_ += tokens;
  lastRewindable_ = rewindable;
}

}  // namespace dfi::engine
