// The compare view's statistics on a session written with the Writer (drafter-b regresses on
// prompt 1): per-run statistics against hand-computed ones, intervals equal to the CLI's, and the
// A/B join on (prompt, anchor) against a brute-force one.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "dfi/analysis/run_comparison.h"
#include "dfi/analysis/run_summary.h"
#include "dfi/session/reader.h"
#include "session_fixture.h"
#include "session_test_util.h"

using namespace dfi;
using namespace dfi::analysis;

namespace {

class RunComparison : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = session::testutil::freshPath("compare.dfi");
    fixture::writeFixtureFile(path_, shape_);
  }

  static std::vector<ComparedSeries> load() {
    session::Reader reader(path_);
    return loadComparedSeries(reader.runs(), [&](session::RunId run, const auto& visit) {
      reader.forEachStepSummary(run, visit);
    });
  }

  static inline std::string path_;
  static inline fixture::FixtureShape shape_;
};

TEST_F(RunComparison, StatisticsPerRun) {
  const std::vector<ComparedSeries> series = load();
  ASSERT_EQ(series.size(), std::size_t{2});
  EXPECT_EQ(series[0].label, std::string("drafter-a"));
  EXPECT_EQ(series[1].drafter, std::string("drafter-b"));
  EXPECT_EQ(series[0].blockSize, shape_.blockSize);
  const std::vector<SeriesStatistics> stats = summarizeSeries(series, 200);
  for (int r = 0; r < 2; ++r) {
    const SeriesStatistics& s = stats[static_cast<std::size_t>(r)];
    ASSERT_EQ(s.prompts, (std::vector<session::PromptId>{0, 1, 2}));
    double meanOfMeans = 0;
    std::int64_t histogramSteps = 0;
    for (int p = 0; p < shape_.prompts; ++p) {
      double sum = 0;
      for (int i = 0; i < shape_.stepsPerPrompt; ++i) sum += fixture::fixtureAccepted(r, p, i, shape_.blockSize - 1) + 1;
      const double tau = sum / shape_.stepsPerPrompt;
      EXPECT_LT(std::abs(s.promptTau[static_cast<std::size_t>(p)] - tau), 1e-12);
      meanOfMeans += tau / shape_.prompts;
    }
    EXPECT_LT(std::abs(s.tau.estimate - meanOfMeans), 1e-12);
    EXPECT_TRUE(s.tau.low <= s.tau.estimate && s.tau.estimate <= s.tau.high);
    for (std::int64_t count : s.histogram) histogramSteps += count;
    EXPECT_EQ(histogramSteps, s.steps);
    EXPECT_EQ(s.slotRates.size(), static_cast<std::size_t>(shape_.blockSize - 1));
  }
}

// The CLI's summary table bootstraps per-response tau in prompt order with the shared defaults
// (test_summary_table.cpp pins that side); so must the compare view, or the same run
// would show two different intervals.
TEST_F(RunComparison, IntervalsAreTheCliIntervals) {
  const std::vector<ComparedSeries> series = load();
  const std::vector<SeriesStatistics> stats = summarizeSeries(series);
  for (const SeriesStatistics& s : stats) {
    EXPECT_TRUE(std::is_sorted(s.prompts.begin(), s.prompts.end()));
    const Interval cli = bootstrapMean(s.promptTau);
    EXPECT_EQ(s.tau.low, cli.low);
    EXPECT_EQ(s.tau.high, cli.high);
  }
  // The summary's row of the same run (what `summary` and the overview show) has the same figures.
  for (std::size_t i = 0; i < series.size(); ++i) {
    SummaryRun run{.drafter = series[i].drafter, .mode = "live", .variant = "reference"};
    for (const ComparedStep& step : series[i].steps) {
      auto response = std::ranges::find(run.responses, step.prompt, &SummaryResponse::promptId);
      if (response == run.responses.end()) response = run.responses.insert(run.responses.end(), {.promptId = step.prompt});
      response->acceptance.stepAcceptLengths.push_back(step.acceptLength);
    }
    const std::vector<SummaryRow> rows = summarizeRuns(std::span(&run, 1));
    ASSERT_EQ(rows.size(), std::size_t{1});
    EXPECT_EQ(rows[0].tau, stats[i].tau);
    EXPECT_EQ(rows[0].tauVllm.estimate, stats[i].tauVllm);
    EXPECT_EQ(rows[0].steps, stats[i].steps);
    EXPECT_LE(rows[0].tauVllm.low, stats[i].tauVllm);
    EXPECT_GE(rows[0].tauVllm.high, stats[i].tauVllm);
  }
  const PairComparison pair = comparePair(series[0], stats[0], series[1], stats[1]);
  const Interval cli = bootstrapPairedDifference(pair.tauA, pair.tauB);
  EXPECT_EQ(pair.difference.low, cli.low);
  EXPECT_EQ(pair.difference.high, cli.high);
}

TEST_F(RunComparison, PairJoinsBlocksOnPromptAndAnchor) {
  const std::vector<ComparedSeries> series = load();
  const std::vector<SeriesStatistics> stats = summarizeSeries(series, 200);
  const PairComparison pair = comparePair(series[0], stats[0], series[1], stats[1], 200);
  ASSERT_EQ(pair.prompts.size(), std::size_t{3});
  EXPECT_LT(pair.tauB[1], pair.tauA[1]);  // drafter-b regresses on prompt 1 only
  EXPECT_EQ(pair.tauB[0], pair.tauA[0]);
  EXPECT_LT(pair.difference.estimate, 0);

  // Brute force: every block of B whose (prompt, anchor) A also has.
  std::map<std::pair<session::PromptId, std::int64_t>, int> blocksA;
  for (const ComparedStep& s : series[0].steps) blocksA[{s.prompt, s.anchor}] = s.acceptLength;
  std::int64_t matched = 0;
  std::multiset<std::pair<int, session::StepId>> expected;  // (drop, B's step)
  for (const ComparedStep& s : series[1].steps) {
    const auto it = blocksA.find({s.prompt, s.anchor});
    if (it == blocksA.end()) continue;
    ++matched;
    if (s.acceptLength < it->second) expected.insert({it->second - s.acceptLength, s.step});
  }
  EXPECT_EQ(pair.matchedBlocks, matched);
  ASSERT_FALSE(pair.regressions.empty());
  std::multiset<std::pair<int, session::StepId>> found;
  for (std::size_t i = 0; i < pair.regressions.size(); ++i) {
    const BlockRegression& r = pair.regressions[i];
    EXPECT_EQ(r.prompt, session::PromptId{1});
    found.insert({r.acceptA - r.acceptB, r.stepB});
    if (i > 0) {
      EXPECT_GE(pair.regressions[i - 1].acceptA - pair.regressions[i - 1].acceptB, r.acceptA - r.acceptB);
    }
  }
  EXPECT_EQ(found, expected);
}

}  // namespace
