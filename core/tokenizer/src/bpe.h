#pragma once
// Byte-level BPE on one pre-tokenized piece: start from one symbol per byte, repeatedly merge
// the adjacent pair with the lowest merge rank (leftmost on ties), as HF tokenizers does.
// Results for short pieces are cached, since natural text repeats the same words.
// Internal to dfi_tokenizer.

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "merge_table.h"

namespace dfi::tokenizer::detail {

class Bpe {
 public:
  // byteIds[b]: the id of the one-character token for byte b. wholePieceIds: when not null
  // (the model's ignore_merges), a piece that is itself in the vocabulary (keyed by its
  // byte-level spelling) is emitted as that one token without merging.
  Bpe(std::array<std::int32_t, 256> byteIds, MergeTable merges,
      const std::unordered_map<std::string, std::int32_t>* wholePieceIds);

  // Appends the ids of `piece` (raw bytes) to `out`. Thread-safe.
  void encodePiece(std::string_view piece, std::vector<std::int32_t>& out) const;

 private:
  void merge(std::string_view piece, std::vector<std::int32_t>& out) const;
  bool lookupCache(std::string_view piece, std::vector<std::int32_t>& out) const;
  void storeCache(std::string_view piece, const std::int32_t* ids, std::size_t count) const;

  std::array<std::int32_t, 256> byteIds_;
  MergeTable merges_;
  const std::unordered_map<std::string, std::int32_t>* wholePieceIds_;

  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace dfi::tokenizer::detail
