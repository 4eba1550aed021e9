#include "dfi/analysis/garble.h"

#include <algorithm>

namespace dfi::analysis {
namespace {

void markTokenRuns(std::span<const std::int32_t> t, std::vector<std::uint8_t>& flags) {
  std::size_t runStart = 0;
  for (std::size_t i = 1; i <= t.size(); ++i) {
    if (i < t.size() && t[i] == t[runStart]) continue;
    if (i - runStart >= 3)
      for (std::size_t j = runStart; j < i; ++j) flags[j] |= kGarbleRepeatedToken;
    runStart = i;
  }
}

// Three back-to-back copies of a span of `width` tokens mark all 3*width slots.
void markRepeatedSpans(std::span<const std::int32_t> t, std::size_t width,
                       std::vector<std::uint8_t>& flags) {
  for (std::size_t start = 0; start + 3 * width <= t.size(); ++start) {
    const auto first = t.subspan(start, width);
    if (std::ranges::equal(first, t.subspan(start + width, width)) &&
        std::ranges::equal(first, t.subspan(start + 2 * width, width)))
      for (std::size_t j = start; j < start + 3 * width; ++j) flags[j] |= kGarbleRepeatedSpan;
  }
}

}  // namespace

std::vector<std::uint8_t> detectGarble(std::span<const std::int32_t> draftTokens,
                                       const GarbleContext& context) {
  std::vector<std::uint8_t> flags(draftTokens.size(), kGarbleNone);
  markTokenRuns(draftTokens, flags);
  for (std::size_t width = 2; width <= 4; ++width) markRepeatedSpans(draftTokens, width, flags);
  for (std::size_t i = 0; i < draftTokens.size(); ++i) {
    if (context.maskTokenId && draftTokens[i] == *context.maskTokenId) flags[i] |= kGarbleMaskToken;
    if (context.tokenizerVocabSize && (draftTokens[i] < 0 || draftTokens[i] >= *context.tokenizerVocabSize))
      flags[i] |= kGarbleInvalidToken;
  }
  return flags;
}

bool isGarbled(std::span<const std::uint8_t> slotFlags) {
  return std::ranges::any_of(slotFlags, [](std::uint8_t f) { return f != kGarbleNone; });
}

std::string garbleFlagNames(std::uint8_t flags) {
  std::string names;
  auto add = [&](std::uint8_t bit, const char* name) {
    if (!(flags & bit)) return;
    if (!names.empty()) names += ", ";
    names += name;
  };
  add(kGarbleRepeatedToken, "repeated-token");
  add(kGarbleRepeatedSpan, "repeated-span");
  add(kGarbleMaskToken, "mask-token");
  add(kGarbleInvalidToken, "invalid-token");
  return names;
}

}  // namespace dfi::analysis
