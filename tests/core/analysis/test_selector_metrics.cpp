// DFlash2's candidate selector judged from its recorded steps (selector_metrics.h), on steps
// whose figures are worked out by hand: candidate recall per slot, overrule rate, the selector's,
// argmax's and oracle chains, and the verdict in each case.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dfi/analysis/diagnosis.h"
#include "dfi/analysis/selector_metrics.h"

using namespace dfi::analysis;
using dfi::session::EvaluationMode;
using dfi::session::StepRecord;
using dfi::session::TokenId;

namespace {

// Three slots, two candidates each (the drafter's argmax first).
StepRecord step(EvaluationMode mode, int accepted, std::vector<TokenId> drafts, std::vector<TokenId> targets,
                std::vector<TokenId> candidates, std::vector<std::int32_t> chosen) {
  StepRecord s;
  s.mode = mode;
  s.acceptedCount = accepted;
  s.draftTokens = std::move(drafts);
  s.targetTokens = std::move(targets);
  s.candidateIds = std::move(candidates);
  s.chosenCandidates = std::move(chosen);
  return s;
}

constexpr auto TF = EvaluationMode::TeacherForced;

TEST(SelectorMetrics, TeacherForcedChainsRecallAndVerdictMatchTheHandComputation) {
  SelectorTally tally;
  // Overrules slot 1 (chooses 5 over 4) and is right: selector 3 accepted, argmax 1, oracle 3.
  tally.add(step(TF, 3, {1, 5, 7}, {1, 5, 7}, {1, 2, 4, 5, 7, 8}, {0, 1, 0}));
  // Overrules slot 0 wrongly: selector 0, argmax 2 (3 = target, 6 = target, then 9 != 10),
  // oracle 2 (10 is no candidate at slot 2).
  tally.add(step(TF, 0, {4, 6, 9}, {3, 6, 10}, {3, 4, 6, 0, 9, 11}, {1, 0, 0}));
  // Keeps the argmax everywhere: both chains 1, oracle 1 (slot 1's target 13 is no candidate).
  tally.add(step(TF, 1, {2, 12, 14}, {2, 13, 14}, {2, 3, 12, 15, 14, 16}, {0, 0, 0}));
  const auto m = tally.finish();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->steps, 3);
  EXPECT_EQ(m->candidates, 2);
  ASSERT_EQ(m->candidateRecall.size(), 3u);
  EXPECT_DOUBLE_EQ(m->candidateRecall[0], 1.0);      // 1, 3, 2 all candidates
  EXPECT_DOUBLE_EQ(m->candidateRecall[1], 2.0 / 3);  // 5, 6 yes; 13 no
  EXPECT_DOUBLE_EQ(m->candidateRecall[2], 2.0 / 3);  // 7, 14 yes; 10 no
  EXPECT_DOUBLE_EQ(m->overruledFraction, 2.0 / 9);
  ASSERT_TRUE(m->chainsKnown);
  EXPECT_DOUBLE_EQ(m->selectorAcceptLength, (4 + 1 + 2) / 3.0);
  EXPECT_DOUBLE_EQ(m->argmaxAcceptLength, (2 + 3 + 2) / 3.0);
  EXPECT_DOUBLE_EQ(m->oracleAcceptLength, (4 + 3 + 2) / 3.0);
  EXPECT_EQ(m->helped, 1);
  EXPECT_EQ(m->hurt, 1);
  EXPECT_FALSE(m->effective());
  EXPECT_NE(m->verdict().find("not effective: it helped 1 steps and hurt 1"), std::string::npos) << m->verdict();
  EXPECT_EQ(selectorMetricsJson(*m)["oracle_accept_length"], 3.0);
}

TEST(SelectorMetrics, NeverOverrulingIsNotEffectiveAndHelpingIs) {
  SelectorTally never;
  never.add(step(TF, 1, {2, 12, 14}, {2, 13, 14}, {2, 3, 12, 15, 14, 16}, {0, 0, 0}));
  EXPECT_NE(never.finish()->verdict().find("never overruled"), std::string::npos);
  SelectorTally helps;
  helps.add(step(TF, 3, {1, 5, 7}, {1, 5, 7}, {1, 2, 4, 5, 7, 8}, {0, 1, 0}));
  EXPECT_TRUE(helps.finish()->effective());
  EXPECT_NE(helps.finish()->verdict().find("the selector helps"), std::string::npos);
}

// Live steps: recall on the reached slots only, no chains.
TEST(SelectorMetrics, LiveStepsScoreReachedSlotsOnly) {
  SelectorTally tally;
  tally.add(step(EvaluationMode::Live, 0, {4, 6, 9}, {3, 99, 98}, {3, 4, 6, 0, 9, 11}, {1, 0, 0}));
  const auto m = tally.finish();
  EXPECT_FALSE(m->chainsKnown);
  EXPECT_EQ(m->recallSlots, (std::vector<std::int64_t>{1, 0, 0}));
  EXPECT_DOUBLE_EQ(m->candidateRecall[0], 1.0);
  EXPECT_NE(m->verdict().find("needs teacher-forced steps"), std::string::npos);
  EXPECT_FALSE(selectorMetricsJson(*m).contains("oracle_accept_length"));
}

// The diagnosis names an ineffective selector among its findings, with what to do; an effective
// one, or a drafter without a selector, adds nothing.
TEST(SelectorMetrics, DiagnosisFindsAnIneffectiveSelector) {
  dfi::session::RunRecord baseline;
  baseline.runId = 7;
  baseline.drafter.path = "/ckpt/dflash2-step-4000";
  auto scanOf = [](std::vector<StepRecord> steps) {
    return [steps](dfi::session::RunId run, const std::function<void(const StepRecord&)>& visit) {
      EXPECT_EQ(run, 7);
      for (const StepRecord& s : steps) visit(s);
    };
  };
  // Overrules slot 0 wrongly: its chain accepts 0, the argmax's 2.
  const auto hurts = measuredFindings(baseline, scanOf({step(TF, 0, {4, 6, 9}, {3, 6, 10}, {3, 4, 6, 0, 9, 11}, {1, 0, 0})}));
  ASSERT_EQ(hurts.size(), 1u);
  EXPECT_EQ(hurts[0].code, "selector-not-effective");
  EXPECT_EQ(hurts[0].subject, "dflash2-step-4000: the DFlash2 candidate selector");
  EXPECT_NE(hurts[0].message.find("never helped"), std::string::npos) << hurts[0].message;
  EXPECT_NE(hurts[0].message.find("serve the drafter's argmax"), std::string::npos) << hurts[0].message;
  const auto helps = measuredFindings(baseline, scanOf({step(TF, 3, {1, 5, 7}, {1, 5, 7}, {1, 2, 4, 5, 7, 8}, {0, 1, 0})}));
  EXPECT_TRUE(helps.empty());
  StepRecord plain;
  plain.draftTokens = {1, 2};
  EXPECT_TRUE(measuredFindings(baseline, scanOf({plain})).empty());
}

TEST(SelectorMetrics, StepsWithoutCandidatesGiveNone) {
  SelectorTally tally;
  StepRecord plain;
  plain.draftTokens = {1, 2};
  tally.add(plain);
  EXPECT_FALSE(tally.finish().has_value());
}

}  // namespace
