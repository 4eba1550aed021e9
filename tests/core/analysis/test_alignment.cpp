// Another pipeline's response against the engine's reference: the verdicts on constructed
// cases (identical, drafter-side, target-side, histogram-only records) and the reference trace
// rebuilt from live step records (a step cut by a stop token keeps only what it counts).

#include <gtest/gtest.h>

#include "dfi/analysis/alignment.h"

namespace dfi::analysis {
namespace {

using Tokens = std::vector<session::TokenId>;

session::StepRecord liveStep(session::TokenId anchor, Tokens drafts, int accepted, session::TokenId bonus,
                             int counted = 0) {
  session::StepRecord s;
  s.anchorToken = anchor;
  s.draftTokens = std::move(drafts);
  s.acceptedCount = accepted;
  s.bonusToken = bonus;
  s.countedLength = counted;
  return s;
}

TEST(Alignment, TraceOfLiveSteps) {
  // Anchor 5; step 0 accepts 6 7 of [6 7 9] and adds bonus 8; step 1 accepts 1 of [1 2 3], bonus
  // 4, but a stop token at the first committed token cuts it to 1.
  const auto trace = traceOfSteps({liveStep(5, {6, 7, 9}, 2, 8), liveStep(8, {1, 2, 3}, 1, 4, 1)});
  EXPECT_EQ(trace.output, (Tokens{5, 6, 7, 8, 1}));
  EXPECT_EQ(trace.acceptLengths, (std::vector<int>{3, 1}));
  EXPECT_TRUE(traceOfSteps({}).output.empty());
}

const ResponseTrace kReference{{5, 6, 7, 8, 1, 2}, {3, 2}, true};

TEST(Alignment, Identical) {
  const auto a = alignResponse(3, kReference, kReference);
  EXPECT_EQ(a.verdict, Verdict::Identical);
  EXPECT_EQ(a.lossless, true);
  EXPECT_FALSE(a.firstStep);
  EXPECT_FALSE(a.firstToken);
  EXPECT_EQ(a.text(), "identical");
}

TEST(Alignment, DrafterSide) {
  // Same tokens committed in three steps instead of two: the drafter proposed less at step 1.
  const auto a = alignResponse(3, kReference, {{5, 6, 7, 8, 1, 2}, {3, 1, 1}, true});
  EXPECT_EQ(a.verdict, Verdict::DrafterSide);
  EXPECT_EQ(a.firstStep, 1);
  EXPECT_EQ(a.lossless, true);
  EXPECT_EQ(a.text(), "outputs identical, acceptance differs from step 1");
  // Without outputs, only the acceptance can be compared.
  const auto bare = alignResponse(3, kReference, {{}, {2, 3}, true});
  EXPECT_EQ(bare.verdict, Verdict::DrafterSide);
  EXPECT_EQ(bare.firstStep, 0);
  EXPECT_FALSE(bare.lossless);
}

TEST(Alignment, TargetSide) {
  // Token 4 differs: the other pipeline left the target's greedy (its steps match up to there).
  const auto a = alignResponse(3, kReference, {{5, 6, 7, 8, 9, 2}, {3, 2}, true});
  EXPECT_EQ(a.verdict, Verdict::TargetSide);
  EXPECT_EQ(a.firstToken, 4);
  EXPECT_EQ(a.lossless, false);
  EXPECT_FALSE(a.firstStep);
  EXPECT_EQ(a.text(), "output diverges from the target's greedy at token 4 (not lossless: cache rollback, kernels, dtype)");
}

TEST(Alignment, StopsElsewhereIsNoDivergence) {
  // A shorter budget: a prefix of the target's greedy, whose last step is cut.
  const auto a = alignResponse(3, kReference, {{5, 6, 7, 8, 1}, {3, 1}, true});
  EXPECT_EQ(a.lossless, true);
  EXPECT_EQ(a.verdict, Verdict::DrafterSide);
  EXPECT_EQ(a.firstStep, 1);
}

TEST(Alignment, HistogramOnlyRecords) {
  // vLLM's and SGLang's per-request counts: the same multiset is the same acceptance.
  const auto same = alignResponse(1, kReference, {{5, 6, 7, 8, 1, 2}, {2, 3}, false});
  EXPECT_EQ(same.verdict, Verdict::Identical);
  const auto other = alignResponse(1, kReference, {{5, 6, 7, 8, 1, 2}, {1, 4}, false});
  EXPECT_EQ(other.verdict, Verdict::DrafterSide);
  EXPECT_FALSE(other.firstStep);
  EXPECT_EQ(other.text(), "outputs identical, acceptance differs (step order not recorded)");
}

TEST(Alignment, Summary) {
  const auto s = summarizeAlignment({alignResponse(0, kReference, kReference),
                                     alignResponse(1, kReference, {{5, 6, 7, 8, 9, 2}, {3, 2}, true}),
                                     alignResponse(2, kReference, {{5, 6, 0, 8, 9, 2}, {1, 2, 2}, true})});
  EXPECT_EQ(s.prompts, 3);
  EXPECT_EQ(s.identical, 1);
  EXPECT_EQ(s.targetSide, 2);
  EXPECT_EQ(s.firstTokenHistogram, (std::map<std::int64_t, std::int64_t>{{2, 1}, {4, 1}}));
  EXPECT_EQ(s.firstStepHistogram, (std::map<int, std::int64_t>{{0, 1}}));
}

TEST(Alignment, ImportSettings) {
  session::RunRecord run;
  run.settingsJson = R"({"import": {"reference_run": 7, "step_order": "recorded"}})";
  EXPECT_FALSE(importAlignment(run));  // no origin: a run of this engine
  run.origin = "z-lab dflash 0.1.0 benchmark records: f.jsonl";
  ASSERT_TRUE(importAlignment(run));
  EXPECT_EQ(importAlignment(run)->referenceRun, 7);
  EXPECT_TRUE(importAlignment(run)->stepOrderRecorded);
  run.settingsJson = R"j({"import": {"reference_run": 7, "step_order": "not recorded (per-request counts)"}})j";
  EXPECT_FALSE(importAlignment(run)->stepOrderRecorded);
  run.settingsJson = "not json";
  EXPECT_FALSE(importAlignment(run));
}

}  // namespace
}  // namespace dfi::analysis
