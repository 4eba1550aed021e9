#pragma once
// Garble detectors: the draft degenerations that point to a train/eval mismatch rather than a
// weak drafter ("FizzFizzFizzBuzz", "elif elif elif", the mask token leaking into the draft,
// the anchor proposed again). One flag byte per draft slot is recorded with each step
// (StepRecord::garbleFlags), so the token view can mark the slots and the navigator can filter
// by detector.
//
// A detector looks at the whole draft, but only the slots the verifier looked at (the accepted
// ones and the first mismatch) say what the drafter proposes; past the first mismatch nothing
// was used, and a diffusion drafter's rejected tail repeats even when the drafter is good.
// StepSummary::proposedGarble / tailGarble keep the two apart.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dfi::analysis {

// Bit values are stored in session files: never renumber them.
enum GarbleFlag : std::uint8_t {
  kGarbleNone = 0,
  // Part of a run of three or more identical tokens ("elif elif elif"); the anchor counts as
  // the run's first token, so "elif" -> "elif elif" fires.
  kGarbleRepeatedToken = 1u << 0,
  // The mask token itself was drafted (its embedding row leaked through the LM head).
  kGarbleMaskToken = 1u << 1,
  // An id past the tokenizer's vocabulary (a padded embedding row): never valid text.
  kGarbleInvalidToken = 1u << 2,
  // Part of a span of 2..4 tokens, not all the same, repeated three times back to back
  // ("Fizz" "Fizz" "Fizz" as "F" "izz" x3); the anchor may start the first copy.
  kGarbleRepeatedSpan = 1u << 3,
  // Slot 0 proposes the anchor again: the drafter predicts the token it was given, as a block
  // shifted by one position (an off-by-one in the mask or the positions) does.
  kGarbleAnchorEcho = 1u << 4,
};

// A detector's stable name (shown in the GUI, used by filters and exports) and what it means.
struct GarbleDetector {
  GarbleFlag flag;
  std::string_view name;
  std::string_view description;
};

// Every detector, in display order.
std::span<const GarbleDetector> garbleDetectors();

struct GarbleContext {
  std::optional<std::int32_t> maskTokenId;
  std::optional<std::int32_t> tokenizerVocabSize;  // ids >= this are invalid
};

// A slot without a draft: not recorded by another engine, or not computed past a rejection (a
// diagnosis hypothesis's run). The drafts end at the first one.
inline constexpr std::int32_t kNoDraft = -1;

// One flag byte per draft slot (none from the first kNoDraft on). `anchorToken`, the token the block was drafted from, lets the
// repeat detectors see a pattern that starts at the anchor and enables anchor-echo.
std::vector<std::uint8_t> detectGarble(std::span<const std::int32_t> draftTokens, const GarbleContext& context = {},
                                       std::optional<std::int32_t> anchorToken = std::nullopt);

// True when any slot is flagged.
bool isGarbled(std::span<const std::uint8_t> slotFlags);

// "repeated-token, mask-token" for display; "" when no flag is set.
std::string garbleFlagNames(std::uint8_t flags);

}  // namespace dfi::analysis
