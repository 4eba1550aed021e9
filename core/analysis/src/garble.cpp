#include "dfi/analysis/garble.h"

#include <algorithm>
#include <unordered_set>

namespace dfi::analysis {
namespace {

bool hasTokenRun(std::span<const std::int32_t> t, std::size_t runLength) {
  std::size_t run = 1;
  for (std::size_t i = 1; i < t.size(); ++i) {
    run = t[i] == t[i - 1] ? run + 1 : 1;
    if (run >= runLength) return true;
  }
  return false;
}

// Three back-to-back copies of some span of `width` tokens.
bool hasRepeatedSpan(std::span<const std::int32_t> t, std::size_t width) {
  if (t.size() < 3 * width) return false;
  for (std::size_t start = 0; start + 3 * width <= t.size(); ++start) {
    const auto first = t.subspan(start, width);
    if (std::ranges::equal(first, t.subspan(start + width, width)) &&
        std::ranges::equal(first, t.subspan(start + 2 * width, width)))
      return true;
  }
  return false;
}

}  // namespace

std::uint32_t detectGarble(std::span<const std::int32_t> draftTokens) {
  std::uint32_t flags = kGarbleNone;
  if (hasTokenRun(draftTokens, 3)) flags |= kGarbleRepeatedToken;
  for (std::size_t width = 2; width <= 4; ++width)
    if (hasRepeatedSpan(draftTokens, width)) flags |= kGarbleRepeatedSpan;
  if (draftTokens.size() >= 8) {
    const std::unordered_set<std::int32_t> distinct(draftTokens.begin(), draftTokens.end());
    if (distinct.size() * 2 < draftTokens.size()) flags |= kGarbleLowDiversity;
  }
  return flags;
}

std::string garbleFlagNames(std::uint32_t flags) {
  std::string names;
  auto add = [&](std::uint32_t bit, const char* name) {
    if (!(flags & bit)) return;
    if (!names.empty()) names += ", ";
    names += name;
  };
  add(kGarbleRepeatedToken, "repeated-token");
  add(kGarbleRepeatedSpan, "repeated-span");
  add(kGarbleLowDiversity, "low-diversity");
  return names;
}

}  // namespace dfi::analysis
