// The end-of-run summary: rows per run and prompt set, tau(reference) with a bootstrap
// interval that contains it, and the same numbers in the JSON summary event.

#include <gtest/gtest.h>

#include <numeric>

#include <nlohmann/json.hpp>

#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/summary_table.h"

using namespace dfi;
using namespace dfi::analysis;

namespace {

SummaryResponse response(const std::string& dataset, std::vector<int> lengths, std::int64_t promptId = 0) {
  const int tokens = std::accumulate(lengths.begin(), lengths.end(), 0);
  return {promptId, dataset, {std::move(lengths), tokens}};
}

std::vector<SummaryRun> twoRuns() {
  SummaryRun live{"step20k", "live", "reference", {}};
  for (int i = 0; i < 12; ++i)
    live.responses.push_back(response(i % 3 ? "gsm8k" : "mt-bench", {1 + i % 5, 3, 7, 2 + i % 4}, i));
  SummaryRun tree{"step20k", "ddtree-8", "anchor-visible", {}};
  for (int i = 0; i < 5; ++i) tree.responses.push_back(response("gsm8k", {4, 1 + i, 9}, i));
  tree.responses.push_back(response("gsm8k", {}, 5));  // no step: carries no acceptance
  return {live, tree};
}

}  // namespace

TEST(SummaryTable, IntervalsContainThePointEstimate) {
  const auto runs = twoRuns();
  const auto rows = summarizeRuns(runs);
  ASSERT_EQ(rows.size(), 4u);  // live: gsm8k, mt-bench, all; ddtree: gsm8k only (no "all")
  EXPECT_EQ(rows[0].dataset, "mt-bench");
  EXPECT_EQ(rows[1].dataset, "gsm8k");
  EXPECT_EQ(rows[2].dataset, "all");
  EXPECT_EQ(rows[3].mode, "ddtree-8");
  for (const auto& row : rows) {
    EXPECT_LE(row.tau.low, row.tau.estimate) << row.mode << " " << row.dataset;
    EXPECT_GE(row.tau.high, row.tau.estimate) << row.mode << " " << row.dataset;
    EXPECT_LT(row.tau.low, row.tau.high) << "responses differ, so the interval has width";
  }
  // The estimate is tau in the reference convention over the same responses.
  std::vector<analysis::ResponseAcceptance> all;
  for (const auto& r : runs[0].responses) all.push_back(r.acceptance);
  EXPECT_DOUBLE_EQ(rows[2].tau.estimate, analysis::tauReference(all));
  EXPECT_DOUBLE_EQ(rows[2].tauVllm.estimate, analysis::tauVllm(all));
  EXPECT_EQ(rows[2].responses, 12);
  EXPECT_EQ(rows[2].steps, 48);
  EXPECT_TRUE(rows[2].tauSglang.has_value());
  EXPECT_FALSE(rows[3].tauSglang.has_value()) << "SGLang's tau is for live runs only";
  EXPECT_EQ(rows[3].responses, 5) << "the response with no step is not counted";
}

// Merged shards hold the same responses in another order; their table must be the whole
// run's table, intervals included (the bootstrap resamples by index).
TEST(SummaryTable, ResponseOrderDoesNotMoveTheIntervals) {
  SummaryRun whole{"good", "live", "reference", {}}, sharded{"good", "live", "reference", {}};
  for (int p = 0; p < 9; ++p) whole.responses.push_back(response("code", {1 + p % 4, 2 + p % 3}, p));
  for (int shard = 0; shard < 2; ++shard)  // shard i of 2 takes prompts i, i + 2, ...
    for (int p = shard; p < 9; p += 2) sharded.responses.push_back(whole.responses[static_cast<std::size_t>(p)]);
  const std::vector<SummaryRun> a{whole}, b{sharded};
  const auto rowA = summarizeRuns(a).at(0), rowB = summarizeRuns(b).at(0);
  EXPECT_DOUBLE_EQ(rowA.tau.estimate, rowB.tau.estimate);
  EXPECT_DOUBLE_EQ(rowA.tau.low, rowB.tau.low);
  EXPECT_DOUBLE_EQ(rowA.tau.high, rowB.tau.high);
  // The GUI's compare view bootstraps per-prompt tau in prompt order with the same defaults
  // (tests/ui/test_compare_view.cpp): the same run shows the same interval in both.
  std::vector<double> perPrompt;
  for (const auto& r : whole.responses) {
    double sum = 0;
    for (int length : r.acceptance.stepAcceptLengths) sum += length;
    perPrompt.push_back(sum / static_cast<double>(r.acceptance.stepAcceptLengths.size()));
  }
  const analysis::Interval gui = analysis::bootstrapMean(perPrompt);
  EXPECT_EQ(rowB.tau.low, gui.low);
  EXPECT_EQ(rowB.tau.high, gui.high);
}

// The table's figures against a hand computation, not the code against itself: mt-bench's four
// prompts in twoRuns() (i = 0, 3, 6, 9) have step lengths {1,3,7,2}, {4,3,7,5}, {2,3,7,4} and
// {5,3,7,3}: per-prompt means 3.25, 4.75, 4.00 and 4.50, so tau(ref) = 16.5 / 4 = 4.125 over 16
// steps, and tau(vllm) = 66 accepted tokens / 16 steps = 4.125 too (every prompt has 4 steps).
TEST(SummaryTable, TheTableShowsHandComputedFigures) {
  const std::string table = formatSummaryTable(summarizeRuns(twoRuns()));
  std::string mtBench;
  for (std::size_t start = 0, end; start < table.size(); start = end + 1) {
    end = table.find('\n', start);
    const std::string line = table.substr(start, end - start);
    if (line.find("mt-bench") != std::string::npos) mtBench = line;
  }
  ASSERT_FALSE(mtBench.empty()) << table;
  for (const char* cell : {"step20k", "live", "reference", " 4 ", " 16 ", "4.125 ["})
    EXPECT_NE(mtBench.find(cell), std::string::npos) << cell << " in: " << mtBench;
  EXPECT_EQ(mtBench.substr(mtBench.rfind(' ') + 1), "4.125") << "tau(vllm), the last column: " << mtBench;
}

// A paired difference over fewer prompts than a verdict needs is flagged in the CLI as in the
// GUI and the diagnosis (analysis::verdictPossible).
TEST(SummaryTable, APairOverTooFewPromptsIsFlagged) {
  TauComparison few{.mode = "live", .drafter = "b", .variant = "reference", .baselineDrafter = "a",
                    .baselineVariant = "reference", .prompts = 7, .difference = {0.5, 0.2, 0.8}};
  const std::string flagged = formatComparisons(std::vector<TauComparison>{few});
  EXPECT_NE(flagged.find("n 7*"), std::string::npos) << flagged;
  EXPECT_NE(flagged.find("too few for a verdict"), std::string::npos) << flagged;
  few.prompts = 8;
  const std::string enough = formatComparisons(std::vector<TauComparison>{few});
  EXPECT_EQ(enough.find("too few"), std::string::npos) << enough;
  EXPECT_NE(enough.find("n 8 "), std::string::npos) << enough;
}

TEST(SummaryTable, TextAndJsonCarryTheRows) {
  const auto rows = summarizeRuns(twoRuns());
  const std::string table = formatSummaryTable(rows);
  EXPECT_NE(table.find("tau(ref) [95% CI]"), std::string::npos);
  EXPECT_NE(table.find("ddtree-8"), std::string::npos);
  EXPECT_NE(table.find("mt-bench"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(summaryJson(rows).dump());
  ASSERT_EQ(j.size(), rows.size());
  EXPECT_EQ(j[3]["mask_variant"], "anchor-visible");
  EXPECT_DOUBLE_EQ(j[0]["tau_reference"].get<double>(), rows[0].tau.estimate);
  EXPECT_DOUBLE_EQ(j[0]["tau_reference_ci95"][0].get<double>(), rows[0].tau.low);
  EXPECT_FALSE(j[3].contains("tau_sglang"));
}

TEST(SummaryTable, LiveRowsSayHowTheirStepsWereCounted) {
  std::vector<SummaryRun> runs = twoRuns();
  runs[0].stepCounting = "dflash";
  const auto rows = summarizeRuns(runs);
  const std::string table = formatSummaryTable(rows);
  EXPECT_NE(table.find("live steps counted dflash 0.1.0's"), std::string::npos) << table;
  EXPECT_EQ(table.find("full blocks"), std::string::npos) << table;
  const nlohmann::json j = nlohmann::json::parse(summaryJson(rows).dump());
  EXPECT_EQ(j[0]["step_counting"], "dflash");
  EXPECT_FALSE(j[3].contains("step_counting"));
  runs.push_back(runs[0]);
  runs.back().drafter = "step40k";
  runs.back().stepCounting = "full-blocks";
  const std::string mixed = formatSummaryTable(summarizeRuns(runs));
  EXPECT_NE(mixed.find("(full-blocks runs)"), std::string::npos) << mixed;
}

TEST(SummaryTable, ARunWithoutResponsesHasNoTau) {
  const std::vector<SummaryRun> empty{{"step20k", "live", "reference", {}}};
  const auto rows = summarizeRuns(empty);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].dataset, "all");
  EXPECT_EQ(rows[0].responses, 0);
  EXPECT_EQ(formatSummaryTable(rows).find("0.000"), std::string::npos) << "shown as -, not as zero";
  EXPECT_FALSE(summaryJson(rows)[0].contains("tau_reference"));
}

TEST(SummaryTable, DrafterLabelsAreShortAndDistinct) {
  using Labels = std::vector<std::string>;
  EXPECT_EQ(drafterLabels({"/ckpt/step20k", "/ckpt/step40k/"}), (Labels{"step20k", "step40k"}));
  EXPECT_EQ(drafterLabels({"runs/exp1/final", "runs/exp2/final", "other"}), (Labels{"exp1/final", "exp2/final", "other"}));
  EXPECT_EQ(drafterLabels({"a/x/final", "b/x/final"}), (Labels{"a/x/final", "b/x/final"}));
  EXPECT_EQ(drafterLabels({"same", "./same"}), (Labels{"same", "same"})) << "one directory given twice";
}

// A later checkpoint against the first on the same prompts: only prompts both answered count,
// and a uniform gain of one accepted token per step shows as +1 with a tight interval.
TEST(SummaryTable, PairedComparisonAgainstTheFirstDrafter) {
  SummaryRun early{"step20k", "live", "reference", {}}, late{"step40k", "live", "reference", {}};
  SummaryRun otherMode{"step40k", "ddtree-8", "reference", {}};
  for (int p = 0; p < 10; ++p) {
    early.responses.push_back(response("gsm8k", {1 + p % 3, 2}, p));
    late.responses.push_back(response("gsm8k", {2 + p % 3, 3}, p));
  }
  late.responses.push_back(response("gsm8k", {9}, 99));  // no counterpart: left out
  otherMode.responses.push_back(response("gsm8k", {4}, 0));
  const std::vector<SummaryRun> runs{early, late, otherMode};
  const auto comparisons = pairedComparisons(runs);
  ASSERT_EQ(comparisons.size(), 1u) << "ddtree-8 has no other drafter to compare with";
  const auto& c = comparisons[0];
  EXPECT_EQ(c.drafter, "step40k");
  EXPECT_EQ(c.baselineDrafter, "step20k");
  EXPECT_FALSE(c.acrossVariants());
  EXPECT_EQ(c.prompts, 10);
  EXPECT_DOUBLE_EQ(c.difference.estimate, 1.0);
  EXPECT_DOUBLE_EQ(c.difference.low, 1.0);
  EXPECT_DOUBLE_EQ(c.difference.high, 1.0);
  EXPECT_NE(formatComparisons(comparisons).find("step40k - step20k"), std::string::npos);
  EXPECT_EQ(formatComparisons({}), "");
  EXPECT_EQ(comparisonsJson(comparisons)[0]["prompts"], 10);
}

// A drafter under another mask against itself under `reference`, same mode and prompts: the
// cost of a train/eval mask mismatch as a paired difference. Runs with no reference
// counterpart (another mode) are not compared.
TEST(SummaryTable, PairedComparisonAgainstTheReferenceMask) {
  SummaryRun reference{"good", "teacher-forced", "reference", {}};
  SummaryRun visible{"good", "teacher-forced", "anchor-visible", {}};
  SummaryRun liveVisible{"good", "live", "anchor-visible", {}};
  for (int p = 0; p < 8; ++p) {
    reference.responses.push_back(response("code", {4, 4}, p));
    visible.responses.push_back(response("code", {3, 2}, p));  // 1.5 lower on every prompt
    liveVisible.responses.push_back(response("code", {1}, p));
  }
  const std::vector<SummaryRun> runs{reference, visible, liveVisible};
  const auto comparisons = pairedComparisons(runs);
  ASSERT_EQ(comparisons.size(), 1u);
  const auto& c = comparisons[0];
  EXPECT_TRUE(c.acrossVariants());
  EXPECT_EQ(c.drafter, "good");
  EXPECT_EQ(c.baselineDrafter, "good");
  EXPECT_EQ(c.variant, "anchor-visible");
  EXPECT_EQ(c.baselineVariant, "reference");
  EXPECT_EQ(c.prompts, 8);
  EXPECT_DOUBLE_EQ(c.difference.estimate, -1.5);
  const std::string text = formatComparisons(comparisons);
  EXPECT_NE(text.find("against the reference mask"), std::string::npos);
  EXPECT_NE(text.find("anchor-visible - reference"), std::string::npos);
  EXPECT_EQ(text.find("against the first drafter"), std::string::npos) << "one drafter: nothing to compare across drafters";
  EXPECT_EQ(comparisonsJson(comparisons)[0]["baseline_mask_variant"], "reference");
}

// A sampled evaluation repeated: prompts are the bootstrap's sample (a prompt's repeats
// averaged first), the repeats get their own Student-t interval, and drafters are paired on
// (prompt, repeat), whose draws they share.
TEST(SummaryTable, SampledRepeatsGetTheirIntervalAndPairOnPromptAndRepeat) {
  SummaryRun a{"a", "live", "reference", {}}, b{"b", "live", "reference", {}};
  a.sampling = b.sampling = "T=1";
  for (int repeat = 0; repeat < 3; ++repeat)
    for (int p = 0; p < 6; ++p) {
      SummaryResponse ra = response("code", {2 + (p * repeat) % 3, 2}, p), rb = response("code", {3 + (p * repeat) % 3, 2}, p);
      ra.sample = rb.sample = repeat;
      a.responses.push_back(ra);
      b.responses.push_back(rb);
    }
  const std::vector<SummaryRun> runs{a, b};
  const auto rows = summarizeRuns(runs);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].responses, 18);
  EXPECT_EQ(rows[0].repeats, 3);
  ASSERT_TRUE(rows[0].tauOverRepeats.has_value());
  EXPECT_DOUBLE_EQ(rows[0].tauOverRepeats->estimate, rows[0].tau.estimate);  // balanced repeats
  EXPECT_LT(rows[0].tauOverRepeats->low, rows[0].tauOverRepeats->high);
  const std::string table = formatSummaryTable(rows);
  EXPECT_NE(table.find("live T=1"), std::string::npos) << table;
  EXPECT_NE(table.find("3: "), std::string::npos) << table;
  EXPECT_NE(table.find("stay greedy measures"), std::string::npos) << table;
  const nlohmann::json json = summaryJson(rows);
  EXPECT_EQ(json[0]["sampling"], "T=1");
  EXPECT_EQ(json[0]["repeats"], 3);
  // b drafts one more accepted token on every (prompt, repeat): the paired difference is
  // exactly +0.5 (one of two steps), over 6 prompts.
  const auto comparisons = pairedComparisons(runs);
  ASSERT_EQ(comparisons.size(), 1u);
  EXPECT_EQ(comparisons[0].prompts, 6);
  EXPECT_DOUBLE_EQ(comparisons[0].difference.estimate, 0.5);
  EXPECT_DOUBLE_EQ(comparisons[0].difference.low, 0.5);
}
