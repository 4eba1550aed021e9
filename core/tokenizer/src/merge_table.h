#pragma once
// The BPE merge table: for a pair of adjacent token ids, its rank (lower merges first) and
// the id of the merged token. An open-addressing hash table keyed by the pair packed into 64
// bits: lookups are the inner loop of BPE, and std::unordered_map costs a pointer chase each.
// Internal to dfi_tokenizer.

#include <cstdint>
#include <optional>
#include <vector>

namespace dfi::tokenizer::detail {

struct Merge {
  std::int32_t rank;
  std::int32_t merged;
};

class MergeTable {
 public:
  explicit MergeTable(std::size_t expectedCount = 0);

  // A later entry for the same pair replaces the earlier one, as when HF builds its map.
  void insertOrAssign(std::int32_t left, std::int32_t right, Merge merge);
  std::optional<Merge> find(std::int32_t left, std::int32_t right) const {
    const std::uint64_t key = pack(left, right);
    for (std::size_t slot = hash(key);; slot = (slot + 1) & mask_) {
      const Slot& s = slots_[slot];
      if (s.merge.rank < 0) return std::nullopt;
      if (s.key == key) return s.merge;
    }
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Merge merge{-1, -1};  // rank -1 marks an empty slot
  };
  static std::uint64_t pack(std::int32_t l, std::int32_t r) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l)) << 32) | static_cast<std::uint32_t>(r);
  }
  std::size_t hash(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void grow();

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 0;
  std::size_t size_ = 0;
};

}  // namespace dfi::tokenizer::detail
