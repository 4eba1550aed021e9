#include "merge_table.h"

#include <algorithm>
#include <bit>

namespace dfi::tokenizer::detail {

MergeTable::MergeTable(std::size_t expectedCount) {
  // Keep the load factor at or below one half so probe runs stay short.
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, expectedCount * 2));
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
}

void MergeTable::insertOrAssign(std::int32_t left, std::int32_t right, Merge merge) {
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const std::uint64_t key = pack(left, right);
  for (std::size_t slot = hash(key);; slot = (slot + 1) & mask_) {
    Slot& s = slots_[slot];
    if (s.merge.rank < 0) {
      s = Slot{key, merge};
      ++size_;
      return;
    }
    if (s.key == key) {
      s.merge = merge;
      return;
    }
  }
}

void MergeTable::grow() {
  std::vector<Slot> old = std::move(slots_);
  *this = MergeTable(old.size());  // doubles: the constructor sizes for twice the count
  for (const Slot& s : old)
    if (s.merge.rank >= 0) insertOrAssign(static_cast<std::int32_t>(s.key >> 32), static_cast<std::int32_t>(s.key & 0xFFFFFFFFu), s.merge);
}

}  // namespace dfi::tokenizer::detail
