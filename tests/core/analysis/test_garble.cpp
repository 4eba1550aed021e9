#include <gtest/gtest.h>

#include "dfi/analysis/garble.h"

using namespace dfi::analysis;
using Tokens = std::vector<std::int32_t>;
using Flags = std::vector<std::uint8_t>;

TEST(Garble, CleanDraftHasNoFlags) {
  const Tokens clean{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_FALSE(isGarbled(detectGarble(clean)));
  EXPECT_TRUE(detectGarble(Tokens{}).empty());
  EXPECT_FALSE(isGarbled(detectGarble(Tokens{4, 4, 5, 4, 4})));  // two in a row is ordinary
}

TEST(Garble, ElifElifElifMarksTheRun) {
  constexpr std::uint8_t R = kGarbleRepeatedToken;
  EXPECT_EQ(detectGarble(Tokens{11, 30, 30, 30, 12}), (Flags{0, R, R, R, 0}));
  EXPECT_EQ(detectGarble(Tokens{30, 30, 30, 30}), (Flags{R, R, R, R}));
}

TEST(Garble, FizzFizzFizzMarksTheRepeatedSpan) {
  constexpr std::uint8_t S = kGarbleRepeatedSpan;
  // "F" "izz" three times, then "Buzz"
  EXPECT_EQ(detectGarble(Tokens{70, 71, 70, 71, 70, 71, 90}), (Flags{S, S, S, S, S, S, 0}));
  EXPECT_FALSE(isGarbled(detectGarble(Tokens{1, 2, 3, 1, 2, 3, 1, 2, 4})));  // third copy broken
}

TEST(Garble, MaskTokenAndPaddedRowsAreFlagged) {
  const GarbleContext ctx{.maskTokenId = 151669, .tokenizerVocabSize = 151669};
  const auto flags = detectGarble(Tokens{5, 151669, 151900, 6}, ctx);
  EXPECT_EQ(flags[0], kGarbleNone);
  EXPECT_EQ(flags[1], kGarbleMaskToken | kGarbleInvalidToken);
  EXPECT_EQ(flags[2], kGarbleInvalidToken);
  EXPECT_EQ(flags[3], kGarbleNone);
}

TEST(Garble, FlagNames) {
  EXPECT_EQ(garbleFlagNames(kGarbleRepeatedToken | kGarbleMaskToken), "repeated-token, mask-token");
  EXPECT_EQ(garbleFlagNames(kGarbleNone), "");
}
