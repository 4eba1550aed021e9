// A block's recorded train/eval parity read back from its statistics and put in words: the
// verdict follows the engine's tolerance, slots are numbered as the token table numbers them.

#include <gtest/gtest.h>

#include "dfi/analysis/block_parity.h"

using namespace dfi;
using namespace dfi::analysis;

namespace {

std::vector<session::StatisticRecord> parityRecords(float diff, float agreement, float first) {
  return {{1, 7, std::string(kParityMaxAbsDiff), -1, -1, {diff}},
          {1, 7, "target.tap.mean", 3, -1, {0.5f, 0.25f}},
          {1, 7, std::string(kParityArgmaxAgreement), -1, -1, {agreement}},
          {1, 7, std::string(kParityFirstDifferingSlot), -1, -1, {first}}};
}

}  // namespace

TEST(BlockParity, ReadsTheThreeRecordsAndNeedsAll) {
  const auto parity = recordedParity(parityRecords(0.5f, 0.8f, 2.0f));
  ASSERT_TRUE(parity.has_value());
  EXPECT_FLOAT_EQ(parity->maxAbsDiff, 0.5);
  EXPECT_FLOAT_EQ(parity->argmaxAgreement, 0.8);
  EXPECT_EQ(parity->firstDifferingSlot, 2);
  auto partial = parityRecords(0.5f, 0.8f, 2.0f);
  partial.pop_back();
  EXPECT_FALSE(recordedParity(partial).has_value());
}

TEST(BlockParity, RoundingIsAgreementInWords) {
  const RecordedParity parity = *recordedParity(parityRecords(2.5e-6f, 1.0f, -1.0f));
  EXPECT_FALSE(parity.flagged());
  const std::string words = parityInWords(parity, 15);
  EXPECT_NE(words.find("parity holds"), std::string::npos) << words;
  EXPECT_NE(words.find("15 of 15 drafted tokens agree"), std::string::npos) << words;
  EXPECT_NE(words.find("2.5e-06"), std::string::npos) << words;
  EXPECT_EQ(words.find("parity."), std::string::npos) << "no field names: " << words;
}

TEST(BlockParity, ADifferentComputationIsNamedWithItsFirstSlot) {
  // The engine's slot 0 is the first drafted token: block slot 1 in the token table.
  const RecordedParity parity = *recordedParity(parityRecords(0.83f, 12.0f / 15.0f, 3.0f));
  EXPECT_TRUE(parity.flagged());
  const std::string words = parityInWords(parity, 15);
  EXPECT_NE(words.find("broken"), std::string::npos) << words;
  EXPECT_NE(words.find("block slot 4"), std::string::npos) << words;
  EXPECT_NE(words.find("12 of 15"), std::string::npos) << words;
  EXPECT_NE(words.find("0.83"), std::string::npos) << words;
  // Logits apart by more than rounding with the same greedy tokens is still flagged.
  const RecordedParity sameTokens{0.01, 1.0, -1};
  EXPECT_TRUE(sameTokens.flagged());
  EXPECT_NE(parityInWords(sameTokens, 0).find("still agree (100% of the drafted tokens agree)"), std::string::npos)
      << parityInWords(sameTokens, 0);
  // Exactly at the tolerance is rounding, as the engine's check has it (> tolerance flags).
  EXPECT_FALSE((RecordedParity{kParityTolerance, 1.0, -1}.flagged()));
}
