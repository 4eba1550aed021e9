#include <gtest/gtest.h>

#include "dfi/analysis/acceptance.h"

using namespace dfi::analysis;

// Two responses of different length make the three conventions disagree, as they do in
// practice; the expected values are worked out by hand from each code base's definition.
TEST(Acceptance, ConventionsDifferAsDocumented) {
  const std::vector<ResponseAcceptance> responses{
      {{4, 2}, 7},          // mean 3; SGLang 7/2 = 3.5 (prefill token counted)
      {{1, 1, 1, 5}, 9},    // mean 2; SGLang 9/4 = 2.25
  };
  EXPECT_DOUBLE_EQ(tauReference(responses), (3.0 + 2.0) / 2);
  EXPECT_DOUBLE_EQ(tauSglang(responses), (3.5 + 2.25) / 2);
  // vLLM pools steps: accepted drafts = (3+1) + (0+0+0+4) = 8 over 6 drafts.
  EXPECT_DOUBLE_EQ(tauVllm(responses), 1.0 + 8.0 / 6.0);
}

TEST(Acceptance, EmptyResponsesAreSkipped) {
  const std::vector<ResponseAcceptance> responses{{{}, 1}, {{16}, 17}};
  EXPECT_DOUBLE_EQ(tauReference(responses), 16.0);
  EXPECT_DOUBLE_EQ(tauSglang(responses), 17.0);
  EXPECT_DOUBLE_EQ(tauVllm(responses), 16.0);
  EXPECT_DOUBLE_EQ(tauReference({}), 0.0);
}

// The per-response tau the bootstraps resample (CLI summary, compare view, export per prompt).
TEST(Acceptance, ResponseTauIsTheMeanStepLength) {
  EXPECT_DOUBLE_EQ(*responseTau({{4, 2}, 7}), 3.0);
  EXPECT_DOUBLE_EQ(*responseTau({{1, 1, 1, 5}, 9}), 2.0);
  EXPECT_FALSE(responseTau({{}, 1}).has_value());
}

// A tally of a response's steps gives its tau; of a run's steps, the pooled mean (vLLM's tau).
TEST(Acceptance, TallyIsTheMeanStepLength) {
  AcceptanceTally tally;
  EXPECT_FALSE(tally.tau().has_value());
  for (int length : {4, 2, 1, 1, 1, 5}) tally.add(length);
  EXPECT_EQ(tally.steps, 6);
  EXPECT_DOUBLE_EQ(*tally.tau(), 14.0 / 6);
  const std::vector<ResponseAcceptance> responses{{{4, 2}, 7}, {{1, 1, 1, 5}, 9}};
  EXPECT_DOUBLE_EQ(*tally.tau(), tauVllm(responses));
}
