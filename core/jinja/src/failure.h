#pragma once
// An error raised below the interpreter (in values, filters, methods), before the template
// position is known. The interpreter turns it into a RenderError naming line and column.

#include <stdexcept>
#include <string>

namespace dfi::jinja::detail {

struct RuntimeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& message) { throw RuntimeFailure(message); }

// Bounds that keep a hostile template from exhausting the stack or memory.
inline constexpr int kMaxNesting = 128;              // parser nesting, macro calls, nested values
inline constexpr std::size_t kMaxStringBytes = 32u << 20;
inline constexpr std::uint64_t kMaxSteps = 2'000'000;  // evaluated nodes per render (the oracle's cases: < 4k)
inline constexpr std::int64_t kMaxRange = 100'000;      // jinja2's sandbox MAX_RANGE

}  // namespace dfi::jinja::detail
