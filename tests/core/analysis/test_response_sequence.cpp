// The response rebuilt from step records: the prompt, then per step the anchor, the accepted
// drafts and the bonus token, each remembering where it came from.

#include <gtest/gtest.h>

#include "dfi/analysis/response_sequence.h"
#include "session_fixture.h"

using namespace dfi;
using namespace dfi::analysis;
using dfi::session::StepRecord;

TEST(ResponseSequence, PromptThenCommittedTokens) {
  const std::vector<session::TokenId> prompt = fixture::fixturePromptTokens(0);  // 10 tokens
  std::vector<StepRecord> steps;
  std::int64_t anchor = 10;
  for (int s = 0; s < 3; ++s) {
    steps.push_back(fixture::fixtureStep(0, 0, s, anchor, 7, 4));
    anchor += steps.back().acceptedCount + 1;
  }
  const ResponseSequence seq = ResponseSequence::build(prompt, steps);
  EXPECT_EQ(seq.promptLength, 10);
  ASSERT_EQ(static_cast<std::int64_t>(seq.tokens.size()), anchor + 1);  // through the last bonus
  for (std::size_t p = 0; p < seq.tokens.size(); ++p) EXPECT_EQ(seq.tokens[p].id, fixture::trueToken(std::int64_t(p)));
  EXPECT_EQ(seq.tokens[10].origin, TokenOrigin::FirstSample);
  const int a0 = steps[0].acceptedCount;
  if (a0 > 0) {
    EXPECT_EQ(seq.tokens[11].origin, TokenOrigin::AcceptedDraft);
  }
  EXPECT_EQ(seq.tokens[std::size_t(10 + a0 + 1)].origin, TokenOrigin::Bonus);
  EXPECT_EQ(seq.tokens[std::size_t(10 + a0 + 1)].stepIndex, 0);
}

TEST(ResponseSequence, AGapInTheStepsEndsTheResponse) {
  std::vector<StepRecord> steps{fixture::fixtureStep(0, 0, 0, 10, 7, 4), fixture::fixtureStep(0, 0, 2, 40, 7, 4)};
  const ResponseSequence seq = ResponseSequence::build(fixture::fixturePromptTokens(0), steps);
  EXPECT_EQ(static_cast<std::int64_t>(seq.tokens.size()), 10 + steps[0].acceptedCount + 2);
}
