#pragma once
// BPE on one pre-tokenized piece, as HF tokenizers' BPE model does it: start from one symbol
// per byte (byte-level alphabet) or per character (SentencePiece-style alphabet, with <0xNN>
// byte fallback and an unk token for characters outside the vocabulary), then repeatedly merge
// the adjacent pair with the lowest merge rank (leftmost on ties). A priority queue of
// candidate pairs keeps a piece of n symbols at O(n log n): a Gemma-style tokenizer without a
// pre-tokenizer hands BPE whole texts. Results for short pieces are cached, since natural text
// repeats the same words. Internal to dfi_tokenizer.

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "merge_table.h"

namespace dfi::tokenizer::detail {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIds = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

struct BpeOptions {
  enum class Alphabet : std::uint8_t { Bytes, Characters };
  Alphabet alphabet = Alphabet::Bytes;
  // Bytes: the id of each byte's one-symbol token. Characters: the id of its <0xNN> token
  // (byte fallback), -1 where there is none.
  std::array<std::int32_t, 256> byteIds{};
  bool byteFallback = false;
  bool fuseUnk = false;
  std::int32_t unkId = -1;  // -1: a character without a token is dropped, as HF does
  bool ignoreMerges = false;
};

class Bpe {
 public:
  // `vocab` maps token spellings (byte-level spelling for the byte alphabet) to ids; it must
  // outlive the Bpe.
  Bpe(BpeOptions options, MergeTable merges, const TokenIds& vocab);

  // Appends the ids of `piece` to `out`: raw bytes for the byte alphabet, UTF-8 text for the
  // character alphabet. Thread-safe.
  void encodePiece(std::string_view piece, std::vector<std::int32_t>& out) const;

 private:
  void initialSymbols(std::string_view piece, std::vector<std::int32_t>& ids) const;
  void merge(std::vector<std::int32_t>& ids, std::vector<std::int32_t>& out) const;
  bool lookupCache(std::string_view piece, std::vector<std::int32_t>& out) const;
  void storeCache(std::string_view piece, const std::int32_t* ids, std::size_t count) const;

  BpeOptions options_;
  MergeTable merges_;
  const TokenIds& vocab_;
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace dfi::tokenizer::detail
