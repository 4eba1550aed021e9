#pragma once
// How many rows of a row-wise CPU kernel (the norms, RoPE) one at::parallel_for task takes:
// about 16K elements, so that a task's work outweighs handing it to a thread, and a short
// sequence's few rows stay on one thread.

#include <algorithm>
#include <cstdint>

namespace dfi::engine {

inline int64_t rowsPerTask(int64_t rowLength) {
  constexpr int64_t kElementsPerTask = 16384;
  return std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(1, rowLength));
}

}  // namespace dfi::engine
