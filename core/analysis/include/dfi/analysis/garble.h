#pragma once
// Garble detectors: the draft degenerations that point to a train/eval mismatch rather than a
// weak drafter ("FizzFizzFizzBuzz", "elif elif elif", the mask token leaking into the draft).
// One flag byte per draft slot is recorded with each step (StepRecord::garbleFlags), so the
// token view can mark the slots and the navigator can filter garbled blocks.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dfi::analysis {

enum GarbleFlag : std::uint8_t {
  kGarbleNone = 0,
  // Part of a run of three or more identical tokens ("elif elif elif").
  kGarbleRepeatedToken = 1u << 0,
  // The mask token itself was drafted (its embedding row leaked through the LM head).
  kGarbleMaskToken = 1u << 1,
  // An id past the tokenizer's vocabulary (a padded embedding row): never valid text.
  kGarbleInvalidToken = 1u << 2,
  // Part of a span of 2..4 tokens repeated three times back to back ("F" "izz" x3).
  kGarbleRepeatedSpan = 1u << 3,
};

struct GarbleContext {
  std::optional<std::int32_t> maskTokenId;
  std::optional<std::int32_t> tokenizerVocabSize;  // ids >= this are invalid
};

// One flag byte per draft slot.
std::vector<std::uint8_t> detectGarble(std::span<const std::int32_t> draftTokens,
                                       const GarbleContext& context = {});

// True when any slot is flagged.
bool isGarbled(std::span<const std::uint8_t> slotFlags);

// "repeated-token, mask-token" for display; "" when no flag is set.
std::string garbleFlagNames(std::uint8_t flags);

}  // namespace dfi::analysis
