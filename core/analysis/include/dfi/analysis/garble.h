#pragma once
// Garble detectors: the draft degenerations that point to a train/eval mismatch rather than a
// weak drafter ("FizzFizzFizzBuzz", "elif elif elif"). Each is a flag in a bit set recorded with
// the step, so the navigator can filter garbled blocks.

#include <cstdint>
#include <span>
#include <string>

namespace dfi::analysis {

enum GarbleFlag : std::uint32_t {
  kGarbleNone = 0,
  // The same token three or more times in a row ("elif elif elif").
  kGarbleRepeatedToken = 1u << 0,
  // A span of 2..4 tokens immediately repeated, three occurrences in a row ("Fizz" "Fizz" "Fizz"
  // with sub-word pieces, or "a b a b a b").
  kGarbleRepeatedSpan = 1u << 1,
  // Fewer distinct tokens than half the block (only checked for blocks of 8 or more).
  kGarbleLowDiversity = 1u << 2,
};

std::uint32_t detectGarble(std::span<const std::int32_t> draftTokens);

// "repeated-token, repeated-span" for display; "" when no flag is set.
std::string garbleFlagNames(std::uint32_t flags);

}  // namespace dfi::analysis
