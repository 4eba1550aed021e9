#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dfi/analysis/pass_bars.h"
#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {

// A run whose prompt p (0..n-1) has one response with the given step lengths.
SummaryRun runOf(const std::string& drafter, const std::string& mode, const std::string& variant,
                 const std::vector<std::vector<int>>& lengthsByPrompt, const std::string& dataset = "code") {
  SummaryRun run{.drafter = drafter, .mode = mode, .variant = variant};
  for (std::size_t p = 0; p < lengthsByPrompt.size(); ++p)
    run.responses.push_back({.promptId = static_cast<std::int64_t>(p),
                             .dataset = dataset,
                             .acceptance = {.stepAcceptLengths = lengthsByPrompt[p]}});
  return run;
}

std::vector<SummaryRun> session() {
  // new: per-prompt taus 4, 3, 5 (mean 4); old: 3, 3, 4 (mean 10/3).
  return {runOf("new", "live", "reference", {{4, 4}, {2, 4}, {5}}),
          runOf("new", "teacher-forced", "reference", {{6}, {6}, {6}}),
          runOf("new", "teacher-forced", "anchor-visible", {{1}, {1}, {1}}),
          runOf("old", "live", "reference", {{3}, {3}, {4}})};
}

BarResult check(const std::string& bar, bool strict = false) {
  const auto runs = session();
  const std::vector<PassBar> bars{parsePassBar(bar)};
  return checkPassBars(bars, runs, strict).front();
}

TEST(PassBars, ParsesEachQuantityAndComparison) {
  const PassBar tau = parsePassBar("  tau(step40k) >= 4.0 ");
  EXPECT_EQ(tau.text, "tau(step40k) >= 4.0");
  EXPECT_EQ(tau.quantity, BarQuantity::Tau);
  EXPECT_EQ(tau.run, (RunSelector{"step40k", {}}));
  EXPECT_EQ(tau.comparison, BarComparison::AtLeast);
  EXPECT_EQ(tau.value, 4.0);

  const PassBar vllm = parsePassBar("tau_vllm(step40k, ddtree-8 , anchor-visible)<3.5");
  EXPECT_EQ(vllm.quantity, BarQuantity::TauVllm);
  EXPECT_EQ(vllm.run, (RunSelector{"step40k", {"ddtree-8", "anchor-visible"}}));
  EXPECT_EQ(vllm.comparison, BarComparison::Below);

  const PassBar paired = parsePassBar("paired(gemma-4-dflash - gemma-4-dflash-old, live) > -0.1");
  EXPECT_EQ(paired.quantity, BarQuantity::Paired);
  EXPECT_EQ(paired.run.drafter, "gemma-4-dflash");  // hyphens inside labels are not the minus
  ASSERT_TRUE(paired.baseline);
  EXPECT_EQ(*paired.baseline, (RunSelector{"gemma-4-dflash-old", {"live"}}));
  EXPECT_EQ(paired.comparison, BarComparison::Above);
  EXPECT_EQ(paired.value, -0.1);
  EXPECT_EQ(parsePassBar("tau(a) <= 2").comparison, BarComparison::AtMost);
}

TEST(PassBars, RefusesMalformedBarsQuotingThem) {
  for (const char* bar : {"tau step40k >= 4", "accept(step40k) >= 4", "tau() >= 4", "tau(a,, live) >= 4",
                          "tau(a) => 4", "tau(a) >= four", "tau(a) >= 4 and more", "tau(a)", "paired(a-b) > 0",
                          "paired(a - b - c) > 0"}) {
    try {
      parsePassBar(bar);
      ADD_FAILURE() << bar << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(bar), std::string::npos) << e.what();
    }
  }
}

TEST(PassBars, TauIsTheSummarysWholeRunValueWithItsInterval) {
  const BarResult r = check("tau(new) >= 4");
  ASSERT_TRUE(r.problem.empty()) << r.problem;
  EXPECT_EQ(r.run, "new / live / reference");  // no mode named: live; no variant: reference
  EXPECT_DOUBLE_EQ(r.measured.estimate, 4.0);    // (4 + 3 + 5) / 3
  const auto runs = session();
  const auto rows = summarizeRuns(std::span(runs.data(), 1));
  EXPECT_EQ(r.measured, rows.front().tau);
  EXPECT_EQ(r.prompts, 3);
  EXPECT_TRUE(r.passed);
  EXPECT_FALSE(check("tau(new) > 4").passed);

  // vLLM's pooled convention: (4 + 4 + 2 + 4 + 5) / 5 = 3.8.
  EXPECT_DOUBLE_EQ(check("tau_vllm(new) >= 3.9").measured.estimate, 3.8);
  EXPECT_FALSE(check("tau_vllm(new) >= 3.9").passed);
}

TEST(PassBars, PairedIsTheDifferenceOnSharedPrompts) {
  const BarResult r = check("paired(new - old) > 0.5");
  ASSERT_TRUE(r.problem.empty()) << r.problem;
  EXPECT_NEAR(r.measured.estimate, 4.0 - 10.0 / 3.0, 1e-12);
  EXPECT_EQ(r.baseline, "old / live / reference");
  EXPECT_TRUE(r.passed);
  const auto runs = session();
  EXPECT_EQ(r.measured, pairedDifference(runs[0], runs[3]).difference);
  EXPECT_FALSE(check("paired(old - new) > -0.5").passed);
}

TEST(PassBars, StrictNeedsTheWholeIntervalAndNoiseIsMarked) {
  const BarResult loose = check("tau(new) >= 3.5");
  ASSERT_LT(loose.measured.low, 3.5);  // per-prompt taus 3..5: the interval reaches below 3.5
  EXPECT_TRUE(loose.passed);
  EXPECT_TRUE(loose.withinNoise);
  EXPECT_FALSE(check("tau(new) >= 3.5", /*strict=*/true).passed);
  EXPECT_TRUE(check("tau(new) >= 2.9", /*strict=*/true).passed);
  EXPECT_FALSE(check("tau(new) >= 2.9").withinNoise);
}

TEST(PassBars, QualifiersSelectModeVariantAndPromptSet) {
  EXPECT_DOUBLE_EQ(check("tau(new, teacher-forced) >= 0").measured.estimate, 6.0);  // reference preferred
  EXPECT_DOUBLE_EQ(check("tau(new, anchor-visible) >= 0").measured.estimate, 1.0);
  EXPECT_DOUBLE_EQ(check("tau(new, anchor-visible, teacher-forced) >= 0").measured.estimate, 1.0);

  std::vector<SummaryRun> runs = session();
  SummaryRun& live = runs[0];
  live.responses[2].dataset = "math";
  const std::vector<PassBar> bars{parsePassBar("tau(new, math) >= 5"), parsePassBar("tau(new, code) >= 5")};
  const auto results = checkPassBars(bars, runs, false);
  EXPECT_DOUBLE_EQ(results[0].measured.estimate, 5.0);
  EXPECT_TRUE(results[0].passed);
  EXPECT_DOUBLE_EQ(results[1].measured.estimate, 3.5);
  EXPECT_FALSE(results[1].passed);
}

TEST(PassBars, SelectorsThatNameNothingOrSeveralRunsFailSayingWhy) {
  const BarResult missing = check("tau(newer) >= 1");
  EXPECT_FALSE(missing.passed);
  EXPECT_NE(missing.problem.find("no run of drafter 'newer'"), std::string::npos) << missing.problem;
  EXPECT_NE(missing.problem.find("new, old"), std::string::npos) << missing.problem;

  const BarResult unknown = check("tau(new, ddtree-8) >= 1");
  EXPECT_FALSE(unknown.passed);
  EXPECT_NE(unknown.problem.find("'ddtree-8'"), std::string::npos) << unknown.problem;

  // Two live runs of one drafter that differ in sampling only: the selector must say which.
  std::vector<SummaryRun> runs = session();
  runs.push_back(runs[0]);
  runs.back().sampling = "temperature 1";
  const std::vector<PassBar> bars{parsePassBar("tau(new) >= 1"), parsePassBar("tau(new, temperature 1) >= 1")};
  const auto results = checkPassBars(bars, runs, false);
  EXPECT_FALSE(results[0].passed);
  EXPECT_NE(results[0].problem.find("names 2 runs"), std::string::npos) << results[0].problem;
  EXPECT_TRUE(results[1].passed) << results[1].problem;

  const BarResult empty = [] {
    const std::vector<SummaryRun> runs{runOf("new", "live", "reference", {})};
    const std::vector<PassBar> bars{parsePassBar("tau(new) >= 0")};
    return checkPassBars(bars, runs, false).front();
  }();
  EXPECT_FALSE(empty.passed);
  EXPECT_NE(empty.problem.find("no recorded steps"), std::string::npos) << empty.problem;
}

TEST(PassBars, ReportSaysWhichBarFailedAndTheVerdict) {
  const auto runs = session();
  const std::vector<PassBar> bars{parsePassBar("tau(new) >= 4"), parsePassBar("paired(new - old) > 1")};
  const auto results = checkPassBars(bars, runs, false);
  const std::string text = formatBarResults(results, false);
  EXPECT_NE(text.find("PASS  tau(new) >= 4"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL  paired(new - old) > 1"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 pass bars met by the estimate: the gate fails."), std::string::npos) << text;
  EXPECT_NE(text.find("fewer than 8 prompts"), std::string::npos) << text;
  const nlohmann::json json = barResultsJson(results, false);
  EXPECT_FALSE(json.at("passed").get<bool>());
  EXPECT_EQ(json.at("bars").at(1).at("bar"), "paired(new - old) > 1");
  EXPECT_DOUBLE_EQ(json.at("bars").at(0).at("measured").at("estimate").get<double>(), 4.0);
}

}  // namespace
}  // namespace dfi::analysis
