#include <gtest/gtest.h>

#include "dfi/analysis/garble.h"

using namespace dfi::analysis;
using Tokens = std::vector<std::int32_t>;

TEST(Garble, CleanDraftHasNoFlags) {
  EXPECT_EQ(detectGarble(Tokens{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}), kGarbleNone);
  EXPECT_EQ(detectGarble(Tokens{}), kGarbleNone);
  EXPECT_EQ(detectGarble(Tokens{4, 4, 5, 4, 4}), kGarbleNone);  // two in a row is ordinary
}

TEST(Garble, ElifElifElifIsARepeatedToken) {
  // " elif" " elif" " elif" as ids
  EXPECT_EQ(detectGarble(Tokens{11, 30, 30, 30, 12}), kGarbleRepeatedToken);
}

TEST(Garble, FizzFizzFizzIsARepeatedSpan) {
  // "F" "izz" three times, then "Buzz"
  EXPECT_EQ(detectGarble(Tokens{70, 71, 70, 71, 70, 71, 90}), kGarbleRepeatedSpan);
  EXPECT_FALSE(detectGarble(Tokens{1, 2, 3, 1, 2, 3, 1, 2, 4}) & kGarbleRepeatedSpan);  // third copy broken
}

TEST(Garble, LowDiversityNeedsALongEnoughBlock) {
  EXPECT_EQ(detectGarble(Tokens{1, 2, 1, 3, 2, 1, 3, 2}), kGarbleLowDiversity);
  EXPECT_EQ(detectGarble(Tokens{1, 2, 1, 2, 3}), kGarbleNone);
}

TEST(Garble, FlagNames) {
  EXPECT_EQ(garbleFlagNames(kGarbleRepeatedToken | kGarbleLowDiversity), "repeated-token, low-diversity");
  EXPECT_EQ(garbleFlagNames(kGarbleNone), "");
}
