#pragma once
// A benchmark runs at full size from bench/run_all.sh and at a tiny size as a smoke test in
// `make test` (DFI_BENCH_SMOKE=1, bench/CMakeLists.txt): the same code paths at a few hundred
// times less work, so that a benchmark that stopped running fails a test instead of rotting
// until the next `make bench`.

#include <cstdlib>
#include <string_view>

namespace dfi::bench {

inline bool smoke() {
  static const bool on = [] {
    const char* value = std::getenv("DFI_BENCH_SMOKE");
    return value && std::string_view(value) == "1";
  }();
  return on;
}

// `full` in a benchmark run, `tiny` in a smoke run.
template <typename T>
T sized(T full, T tiny) {
  return smoke() ? tiny : full;
}

}  // namespace dfi::bench
