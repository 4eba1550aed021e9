#pragma once
// Decoding state of a whole target model: a KV cache per attention layer, conv window and
// recurrent state per linear-attention (Gated DeltaNet) layer, and the committed length.
//
// Speculative verification runs a block of T tokens and then keeps only the accepted prefix,
// so crop() must return to any length between the start of the last forward and its end.
// Attention layers just drop the tail of their KV cache. For GDN layers there are two ways:
// store the recurrent state after every token of the block, or record the block's delta-rule
// inputs and recompute the kept prefix from the state before the block. We recompute.
// Measured (CPU, one thread, 16-token block; transformers' torch delta-rule functions, which
// do what ours do): tiny fixture (Hv 4, dk 32, dv 16): chunked verify 2.0 ms + recompute of 8
// kept tokens 1.5 ms, against a per-token (recurrent) verify of 2.4 ms; a Qwen3.6-27B GDN
// layer (Hv 48, dk = dv 128): 110 ms + 120 ms against 281 ms, and per-token states cost
// 48 MiB per layer (2.3 GiB per sequence over 48 GDN layers) against ~1 MiB of recorded
// inputs. Time is a wash (the recompute only runs when a suffix is rejected), memory is not.
// (Those times are of the ATen forms; the CPU now runs the recurrence as a kernel, which makes
// the recompute of a few kept tokens a few microseconds per demo layer: bench_gated_delta_rule.)

#include <cstdint>
#include <vector>

#include "models/attention.h"
#include "models/gated_delta_net.h"

namespace dfi::engine {

class ModelCache {
 public:
  // One entry per decoder layer: true for a linear-attention (GDN) layer.
  explicit ModelCache(std::vector<bool> linearLayers);

  int64_t length() const { return length_; }
  // The shortest length crop() can reach: 0 for pure attention models, otherwise the start of
  // the last forward if it was rewindable, else the current length.
  int64_t cropFloor() const;
  // Drops tokens so that `length` remain; UsageError outside [cropFloor(), length()].
  void crop(int64_t length);
  // Forgets every token, so the cache can serve a new sequence.
  void clear();

  KvCache& attention(int layer) { return kv_[layer]; }
  // GLM-5's sparse-attention indexer keys of a layer (empty for every other layer and family).
  KvCache& indexerKeys(int layer) { return indexerKeys_[layer]; }
  LinearAttentionState& linear(int layer) { return linear_[layer]; }

  // Called by the model after a forward over `tokens` new tokens.
  void advance(int64_t tokens, bool rewindable);

 private:
  std::vector<bool> linearLayers_;
  bool anyLinear_ = false;
  std::vector<KvCache> kv_;
  std::vector<KvCache> indexerKeys_;
  std::vector<LinearAttentionState> linear_;
  int64_t length_ = 0;
  int64_t lastStart_ = 0;
  bool lastRewindable_ = false;
};

}  // namespace dfi::engine
