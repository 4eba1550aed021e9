#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "dfi/analysis/budget_what_if.h"
#include "dfi/analysis/run_summary.h"
#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {

using session::EvaluationMode;
using session::StepRecord;

constexpr int kBlock = 6;  // anchor + 5 draft slots

// A teacher-forced step whose first `accepted` drafts match the target, then every slot differs.
StepRecord step(std::int64_t prompt, int accepted) {
  StepRecord s;
  s.promptId = prompt;
  s.mode = EvaluationMode::TeacherForced;
  s.anchorToken = 1;
  for (int slot = 0; slot < kBlock - 1; ++slot) {
    s.targetTokens.push_back(100 + slot);
    s.draftTokens.push_back(slot < accepted ? 100 + slot : 900 + slot);
  }
  s.acceptedCount = accepted;
  return s;
}

// Prompt 1: accepted 5 and 1; prompt 2: accepted 3.
std::vector<StepRecord> threeSteps() { return {step(1, 5), step(1, 1), step(2, 3)}; }

const WhatIfRow& rowNamed(const std::vector<WhatIfRow>& rows, const std::string& label) {
  for (const WhatIfRow& r : rows)
    if (r.label() == label) return r;
  throw std::runtime_error("no row " + label);
}

TEST(BudgetWhatIf, VerifyLengthCapsEachStepsAcceptedDrafts) {
  const auto steps = threeSteps();
  const auto rows = budgetWhatIfs({.steps = steps, .blockSize = kBlock}, std::nullopt);
  ASSERT_EQ(rows.size(), 5u);  // verify 2..6, no top-k: no trees
  // verify 3 (two drafts): prompt 1 steps accept min(5,2)+1 = 3 and min(1,2)+1 = 2, mean 2.5;
  // prompt 2: min(3,2)+1 = 3. z-lab tau = mean over prompts = 2.75.
  EXPECT_DOUBLE_EQ(rowNamed(rows, "verify 3").tau.estimate, 2.75);
  EXPECT_EQ(rowNamed(rows, "verify 3").verifiedTokens, 3);
  // verify 2: every step accepts one draft at most: 2, 2 | 2.
  EXPECT_DOUBLE_EQ(rowNamed(rows, "verify 2").tau.estimate, 2.0);
  EXPECT_EQ(rowNamed(rows, "verify 2").prompts, 2);
}

TEST(BudgetWhatIf, FullVerifyLengthIsTheRunSummarysTau) {
  const auto steps = threeSteps();
  const auto rows = budgetWhatIfs({.steps = steps, .blockSize = kBlock}, std::nullopt);
  SummaryRun run{.drafter = "d", .mode = "teacher-forced", .variant = "reference"};
  for (const std::int64_t prompt : {1, 2}) {
    SummaryResponse response{.promptId = prompt};
    for (const StepRecord& s : steps)
      if (s.promptId == prompt) response.acceptance.stepAcceptLengths.push_back(s.acceptedCount + 1);
    run.responses.push_back(response);
  }
  const auto summary = summarizeRuns(std::span(&run, 1));
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(rows.back().tau, summary[0].tau);  // same estimate and the same bootstrap interval
}

TEST(BudgetWhatIf, TreeBudgetAcceptsThroughASecondCandidate) {
  // One step of a 3-slot block, top-2: slot 1's top-1 is wrong, its second candidate right.
  StepRecord s;
  s.promptId = 1;
  s.mode = EvaluationMode::TeacherForced;
  s.anchorToken = 1;
  s.targetTokens = {10, 11};
  s.draftTokens = {20, 11};
  s.acceptedCount = 0;
  s.topKIds = {20, 10, 11, 21};
  s.topKProbs = {0.6f, 0.4f, 0.9f, 0.1f};
  const std::vector<StepRecord> steps{s};
  const auto rows = budgetWhatIfs({.steps = steps, .blockSize = 3, .topK = 2, .treeBudgets = {1, 2, 3}}, std::nullopt);
  // Budget 1: only the top-1 (20) under the root: nothing accepted. Budget 2 adds 20's child
  // 11 (0.6 * 0.9 = 0.54 > 0.4): still nothing. Budget 3 adds 10 (0.4): one accepted.
  EXPECT_DOUBLE_EQ(rowNamed(rows, "ddtree-1").tau.estimate, 1.0);
  EXPECT_DOUBLE_EQ(rowNamed(rows, "ddtree-2").tau.estimate, 1.0);
  EXPECT_DOUBLE_EQ(rowNamed(rows, "ddtree-3").tau.estimate, 2.0);
  EXPECT_EQ(rowNamed(rows, "ddtree-3").verifiedTokens, 4);
}

TEST(BudgetWhatIf, CostModelInterpolatesAndExtrapolatesLinearly) {
  const CostModel cost{.target = {{1, 20.0}, {4, 23.0}, {16, 29.0}}, .drafterMilliseconds = 2.0, .source = "test"};
  EXPECT_DOUBLE_EQ(cost.targetMilliseconds(1), 20.0);
  EXPECT_DOUBLE_EQ(cost.targetMilliseconds(2), 21.0);
  EXPECT_DOUBLE_EQ(cost.targetMilliseconds(10), 26.0);
  EXPECT_DOUBLE_EQ(cost.targetMilliseconds(32), 37.0);  // the last segment's slope, 0.5 ms a token
  // tau 3 verifying 4 tokens: 3 tokens in 2 + 23 ms against one token in 20 ms.
  EXPECT_DOUBLE_EQ(cost.speedup(3.0, 4), 3.0 * 20.0 / 25.0);
}

TEST(BudgetWhatIf, SpeedupMapsTheTauIntervalAndMarksTheBest) {
  std::vector<StepRecord> steps;
  for (std::int64_t prompt = 1; prompt <= 10; ++prompt)
    for (int accepted : {5, 4, static_cast<int>(prompt % 3)}) steps.push_back(step(prompt, accepted));
  // Verifying is nearly free up to 4 tokens, then costly: verify 4 should win.
  const CostModel cost{.target = {{1, 10.0}, {4, 10.5}, {6, 30.0}}, .drafterMilliseconds = 1.0, .source = "test"};
  const auto rows = budgetWhatIfs({.steps = steps, .blockSize = kBlock}, cost);
  int best = 0;
  for (const WhatIfRow& r : rows) {
    ASSERT_TRUE(r.speedup);
    EXPECT_DOUBLE_EQ(r.speedup->estimate, cost.speedup(r.tau.estimate, r.verifiedTokens));
    EXPECT_DOUBLE_EQ(r.speedup->low, cost.speedup(r.tau.low, r.verifiedTokens));
    EXPECT_DOUBLE_EQ(r.speedup->high, cost.speedup(r.tau.high, r.verifiedTokens));
    EXPECT_LT(r.tau.low, r.tau.high);
    best += r.best;
  }
  EXPECT_EQ(best, 1);
  EXPECT_TRUE(rowNamed(rows, "verify 4").best);
}

// DSpark: a threshold on the confidence head's predicted prefix survival verifies a different
// number of drafts at each step; tau and the speedup (each step at its own cost) by hand.
TEST(BudgetWhatIf, ConfidenceThresholdsVerifyEachStepsOwnLength) {
  std::vector<StepRecord> steps = threeSteps();  // accepted 5, 1 | 3
  // Survival products: .75 .375 ... (length 1 at 0.5); 1 1 .5 .25 .. (length 3); .5 .25 .. (length 1).
  steps[0].draftConfidence = {0.75f, 0.5f, 0.5f, 0.5f, 0.5f};
  steps[1].draftConfidence = {1.0f, 1.0f, 0.5f, 0.5f, 0.5f};
  steps[2].draftConfidence = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  const CostModel cost{.target = {{1, 20.0}, {6, 30.0}}, .drafterMilliseconds = 2.0, .source = "test"};
  const auto rows = budgetWhatIfs({.steps = steps, .blockSize = kBlock}, cost);
  const WhatIfRow& half = rowNamed(rows, "confidence 0.5");
  EXPECT_EQ(half.kind, WhatIfKind::ConfidenceThreshold);
  EXPECT_EQ(half.value, 50);
  // Lengths 1, 3 | 1: accepted min(5,1)+1 = 2, min(1,3)+1 = 2 | min(3,1)+1 = 2: tau 2.
  EXPECT_DOUBLE_EQ(half.tau.estimate, 2.0);
  EXPECT_DOUBLE_EQ(half.meanVerifiedTokens, (2 + 4 + 2) / 3.0);
  EXPECT_EQ(half.verifiedTokens, 3);
  // Each step at its own cost: 22, 26, 22 ms for the target (2 ms a token past the first).
  EXPECT_DOUBLE_EQ(half.speedup->estimate, 2.0 * 20.0 / (2.0 + (22.0 + 26.0 + 22.0) / 3));
  const nlohmann::json json = whatIfJson(rows);
  EXPECT_EQ(json.back()["kind"], "confidence-threshold");
  EXPECT_NE(formatWhatIfs(rows, "dspark", cost).find("confidence 0.5"), std::string::npos);
  // No confidence, no such rows.
  const auto plain = threeSteps();
  for (const WhatIfRow& r : budgetWhatIfs({.steps = plain, .blockSize = kBlock}, std::nullopt))
    EXPECT_NE(r.kind, WhatIfKind::ConfidenceThreshold);
}

// No DDTree budget for a drafter with a Markov head (the demo's DSpark drafter), the default
// ones for the good drafter: read from the config each run records.
TEST(BudgetWhatIf, NoTreeBudgetsForADrafterWhoseSlotsFollowTheirDrafts) {
  auto runOf = [](const std::string& drafter) {
    session::RunRecord run;
    run.blockSize = 16;
    run.topK = 8;
    if (!drafter.empty()) {
      std::ifstream file(std::string(DFI_SOURCE_DIR) + "/resources/demo/" + drafter + "/config.json");
      run.drafter.configJson.assign(std::istreambuf_iterator<char>(file), {});
    }
    return run;
  };
  EXPECT_TRUE(treeBudgetsFor(runOf("drafter-dspark")).empty());
  EXPECT_EQ(treeBudgetsFor(runOf("drafter-good")), defaultTreeBudgets(16, 8));
  EXPECT_EQ(treeBudgetsFor(runOf("")), defaultTreeBudgets(16, 8));  // no config to read
}

TEST(BudgetWhatIf, RefusesStepsOfAnotherMode) {
  auto steps = threeSteps();
  steps[1].mode = EvaluationMode::Live;
  EXPECT_THROW(budgetWhatIfs({.steps = steps, .blockSize = kBlock}, std::nullopt), Error);
}

TEST(BudgetWhatIf, CostModelFileRoundTripsAndNamesBadFields) {
  const auto parsed = parseCostModel(nlohmann::json::parse(R"({"target_ms": {"16": 24.5, "1": 21}, "drafter_ms": 3.1})"),
                                     "cost.json");
  ASSERT_EQ(parsed.target.size(), 2u);
  EXPECT_EQ(parsed.target[0].tokens, 1);  // sorted by tokens
  EXPECT_EQ(parsed.source, "cost.json");
  EXPECT_EQ(parseCostModel(costModelJson(parsed), "again.json").target[1].milliseconds, 24.5);

  const auto fieldOf = [](const char* text) {
    try {
      parseCostModel(nlohmann::json::parse(text), "cost.json");
    } catch (const ValidationError& e) {
      EXPECT_EQ(e.context().file, "cost.json");
      return e.context().item;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(fieldOf(R"({"drafter_ms": 3})"), "target_ms");
  EXPECT_EQ(fieldOf(R"({"target_ms": {"1": 20}})"), "drafter_ms");
  EXPECT_EQ(fieldOf(R"({"target_ms": {"one": 20}, "drafter_ms": 3})"), "target_ms.one");
  EXPECT_EQ(fieldOf(R"({"target_ms": {"1": -2}, "drafter_ms": 3})"), "target_ms.1");
  EXPECT_EQ(fieldOf(R"({"target_ms": {"1": 20}, "drafter_ms": "fast"})"), "drafter_ms");
}

TEST(BudgetWhatIf, CostStatisticsRoundTrip) {
  const CostModel cost{.target = {{1, 20.0}, {8, 22.5}}, .drafterMilliseconds = 1.5, .source = "run 3"};
  const auto statistics = costStatistics(cost, 3);
  const auto back = costFromStatistics(statistics, "run 3");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target.size(), 2u);
  EXPECT_EQ(back->target[1].tokens, 8);
  EXPECT_FLOAT_EQ(back->target[1].milliseconds, 22.5f);
  EXPECT_FLOAT_EQ(back->drafterMilliseconds, 1.5f);
  EXPECT_FALSE(costFromStatistics(std::span(statistics).first(2), "run 3"));
}

TEST(BudgetWhatIf, DefaultTreeBudgetsStopAtWhatTheTopKCanFill) {
  EXPECT_EQ(defaultTreeBudgets(16, 8), (std::vector<int>{2, 4, 8, 16, 32, 64}));  // 15 x 8 = 120 nodes at most
  EXPECT_EQ(defaultTreeBudgets(16, 32).back(), 256);
  EXPECT_EQ(defaultTreeBudgets(4, 1), (std::vector<int>{2}));
  EXPECT_TRUE(defaultTreeBudgets(16, 0).empty());
}

}  // namespace
}  // namespace dfi::analysis
