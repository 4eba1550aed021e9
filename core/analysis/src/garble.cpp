#include "dfi/analysis/garble.h"

#include <algorithm>
#include <array>

namespace dfi::analysis {
namespace {

constexpr std::array kDetectors{
    GarbleDetector{kGarbleRepeatedToken, "repeated-token",
                   "a run of three or more identical tokens, the anchor included (\"elif elif elif\")"},
    GarbleDetector{kGarbleRepeatedSpan, "repeated-span",
                   "a span of 2-4 tokens repeated three times back to back (\"FizzFizzFizz\")"},
    GarbleDetector{kGarbleAnchorEcho, "anchor-echo",
                   "slot 0 proposes the anchor token again: the block looks shifted by one position"},
    GarbleDetector{kGarbleMaskToken, "mask-token", "the mask token itself was drafted"},
    GarbleDetector{kGarbleInvalidToken, "invalid-token", "an id outside the tokenizer's vocabulary"},
};

// `t` is the anchor (when known, `lead` = 1) followed by the draft; flags[i] is draft slot i,
// so position p of `t` is slot p - lead, and the anchor itself is never flagged.
void mark(std::vector<std::uint8_t>& flags, std::size_t lead, std::size_t from, std::size_t to, GarbleFlag flag) {
  for (std::size_t p = std::max(from, lead); p < to; ++p) flags[p - lead] |= flag;
}

void markTokenRuns(std::span<const std::int32_t> t, std::size_t lead, std::vector<std::uint8_t>& flags) {
  std::size_t runStart = 0;
  for (std::size_t i = 1; i <= t.size(); ++i) {
    if (i < t.size() && t[i] == t[runStart]) continue;
    if (i - runStart >= 3) mark(flags, lead, runStart, i, kGarbleRepeatedToken);
    runStart = i;
  }
}

// Three back-to-back copies of a span of `width` tokens mark all 3*width positions. A span of
// one token repeated is a token run, the other detector's.
void markRepeatedSpans(std::span<const std::int32_t> t, std::size_t lead, std::size_t width,
                       std::vector<std::uint8_t>& flags) {
  for (std::size_t start = 0; start + 3 * width <= t.size(); ++start) {
    const auto first = t.subspan(start, width);
    if (std::ranges::all_of(first, [&](std::int32_t id) { return id == first[0]; })) continue;
    if (std::ranges::equal(first, t.subspan(start + width, width)) &&
        std::ranges::equal(first, t.subspan(start + 2 * width, width)))
      mark(flags, lead, start, start + 3 * width, kGarbleRepeatedSpan);
  }
}

}  // namespace

std::span<const GarbleDetector> garbleDetectors() { return kDetectors; }

std::vector<std::uint8_t> detectGarble(std::span<const std::int32_t> draftTokens, const GarbleContext& context,
                                       std::optional<std::int32_t> anchorToken) {
  std::vector<std::uint8_t> flags(draftTokens.size(), kGarbleNone);
  // The drafts end at the first slot without one (kNoDraft): nothing after it is judged.
  const auto drafts = draftTokens.first(static_cast<std::size_t>(std::ranges::find(draftTokens, kNoDraft) - draftTokens.begin()));
  if (drafts.empty()) return flags;
  std::vector<std::int32_t> sequence;
  if (anchorToken) sequence.push_back(*anchorToken);
  sequence.insert(sequence.end(), drafts.begin(), drafts.end());
  const std::size_t lead = anchorToken ? 1 : 0;
  markTokenRuns(sequence, lead, flags);
  for (std::size_t width = 2; width <= 4; ++width) markRepeatedSpans(sequence, lead, width, flags);
  if (anchorToken && drafts[0] == *anchorToken) flags[0] |= kGarbleAnchorEcho;
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    if (context.maskTokenId && drafts[i] == *context.maskTokenId) flags[i] |= kGarbleMaskToken;
    if (context.tokenizerVocabSize && (drafts[i] < 0 || drafts[i] >= *context.tokenizerVocabSize))
      flags[i] |= kGarbleInvalidToken;
  }
  return flags;
}

bool isGarbled(std::span<const std::uint8_t> slotFlags) {
  return std::ranges::any_of(slotFlags, [](std::uint8_t f) { return f != kGarbleNone; });
}

std::string garbleFlagNames(std::uint8_t flags) {
  std::string names;
  for (const GarbleDetector& detector : kDetectors) {
    if (!(flags & detector.flag)) continue;
    if (!names.empty()) names += ", ";
    names += detector.name;
  }
  return names;
}

}  // namespace dfi::analysis
