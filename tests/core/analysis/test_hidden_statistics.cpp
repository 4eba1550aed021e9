// Hidden-state statistics (the engine's records and the GUI's imported dumps alike) against
// hand-computed values, with the NaN/Inf policy: statistics over finite values, NaN and Inf
// counted, a row without finite values all zero, the histogram over the finite values.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "dfi/analysis/hidden_statistics.h"

using dfi::analysis::hiddenStatisticRecords;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::map<std::string, std::vector<float>> byName(const std::vector<dfi::session::StatisticRecord>& records) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& r : records) out[r.name] = r.values;
  return out;
}

TEST(HiddenStatistics, FiniteValuesOnlyWithNanAndInfCounted) {
  // Rows: plain; with a NaN and both infinities; nothing finite; constant.
  const std::vector<double> values{1, -2, 3, -4,      //
                                   kNan, 2, kInf, -kInf,  //
                                   kNan, kNan, kInf, kNan,  //
                                   5, 5, 5, 5};
  const auto records = hiddenStatisticRecords(values, 4, "target.tap", 3);
  ASSERT_EQ(records.size(), 8u);
  for (const auto& r : records) EXPECT_EQ(r.layer, 3);
  auto s = byName(records);
  ASSERT_EQ(s.size(), 8u);
  const std::vector<float> mean{-0.5f, 2.0f, 0.0f, 5.0f};
  const std::vector<float> rms{static_cast<float>(std::sqrt(30.0 / 4)), 2.0f, 0.0f, 5.0f};
  // Population std of {1, -2, 3, -4}: deviations from -0.5 squared: 2.25 + 2.25 + 12.25 + 12.25.
  const std::vector<float> stddev{static_cast<float>(std::sqrt(29.0 / 4)), 0.0f, 0.0f, 0.0f};
  EXPECT_EQ(s["target.tap.mean"], mean);
  EXPECT_EQ(s["target.tap.std"], stddev);
  EXPECT_EQ(s["target.tap.rms"], rms);
  EXPECT_EQ(s["target.tap.absmax"], (std::vector<float>{4, 2, 0, 5}));
  EXPECT_EQ(s["target.tap.nan"], (std::vector<float>{0, 1, 3, 0}));
  EXPECT_EQ(s["target.tap.inf"], (std::vector<float>{0, 2, 1, 0}));
  // Nine finite values over [-4, 5]: bin width 9/64; -4 in bin 0, 5 (the max) in the last.
  EXPECT_EQ(s["target.tap.histogram_range"], (std::vector<float>{-4, 5}));
  const std::vector<float>& counts = s["target.tap.histogram"];
  ASSERT_EQ(counts.size(), 64u);
  float total = 0;
  for (float c : counts) total += c;
  EXPECT_EQ(total, 9.0f);
  EXPECT_EQ(counts[0], 1.0f);   // -4
  EXPECT_EQ(counts[63], 4.0f);  // the four 5s
  EXPECT_EQ(counts[static_cast<std::size_t>(std::floor((1.0 + 4) / (9.0 / 64)))], 1.0f);
}

TEST(HiddenStatistics, DegenerateRanges) {
  // Constant values: every one in bin 0 over [c, c].
  auto s = byName(hiddenStatisticRecords(std::vector<double>{2, 2, 2, 2, 2, 2}, 3, "drafter.fc"));
  EXPECT_EQ(s["drafter.fc.histogram"][0], 6.0f);
  EXPECT_EQ(s["drafter.fc.histogram_range"], (std::vector<float>{2, 2}));
  EXPECT_EQ(s["drafter.fc.mean"], (std::vector<float>{2, 2}));
  // Nothing finite: zero counts over [0, 0], and every statistic is still there.
  s = byName(hiddenStatisticRecords(std::vector<double>{kNan, kInf}, 2, "drafter.fc"));
  EXPECT_EQ(s["drafter.fc.histogram"], std::vector<float>(64, 0.0f));
  EXPECT_EQ(s["drafter.fc.histogram_range"], (std::vector<float>{0, 0}));
  EXPECT_EQ(s["drafter.fc.absmax"], (std::vector<float>{0}));
  // A trailing partial row is not a position.
  s = byName(hiddenStatisticRecords(std::vector<double>{1, 3, 7}, 2, "drafter.fc"));
  EXPECT_EQ(s["drafter.fc.mean"], (std::vector<float>{2}));
  EXPECT_EQ(s["drafter.fc.histogram_range"], (std::vector<float>{1, 3}));
}

}  // namespace
