#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "dfi/analysis/statistics.h"
#include "dfi/base/error.h"

using namespace dfi::analysis;

TEST(Statistics, HistogramAndSurvivalCurve) {
  const std::vector<int> lengths{1, 4, 4, 2, 16};
  const auto hist = acceptanceHistogram(lengths, 16);
  ASSERT_EQ(hist.size(), 17u);
  EXPECT_EQ(hist[1], 1);
  EXPECT_EQ(hist[4], 2);
  EXPECT_EQ(hist[16], 1);
  const auto rates = slotAcceptanceRates(lengths, 16);
  ASSERT_EQ(rates.size(), 15u);
  EXPECT_DOUBLE_EQ(rates[0], 4.0 / 5);   // slot 1 accepted whenever length >= 2
  EXPECT_DOUBLE_EQ(rates[2], 3.0 / 5);   // slot 3: lengths 4, 4, 16
  EXPECT_DOUBLE_EQ(rates[3], 1.0 / 5);   // slot 4: only 16
  EXPECT_DOUBLE_EQ(rates[14], 1.0 / 5);
}

// For a large normal sample the percentile interval approaches mean +- 1.96 sigma / sqrt(n).
TEST(Statistics, BootstrapMatchesTheNormalApproximation) {
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(3.0, 1.5);
  std::vector<double> v(2000);
  for (double& x : v) x = normal(rng);
  const Interval ci = bootstrapMean(v, 0.95, 4000, 11);
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) s += (x - m) * (x - m);
  const double se = std::sqrt(s / (v.size() - 1)) / std::sqrt(double(v.size()));
  EXPECT_DOUBLE_EQ(ci.estimate, m);
  EXPECT_NEAR(ci.low, m - 1.96 * se, 0.15 * se * 1.96);
  EXPECT_NEAR(ci.high, m + 1.96 * se, 0.15 * se * 1.96);
  EXPECT_EQ(bootstrapMean(v, 0.95, 500, 5).low, bootstrapMean(v, 0.95, 500, 5).low);
}

// A pooled ratio over prompts of unequal sizes: the percentile interval approaches the delta
// method's R +- 1.96 se, se^2 = sum((n_i - R d_i)^2) / (n (n - 1) dbar^2).
TEST(Statistics, RatioBootstrapMatchesTheDeltaMethod) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> steps(3, 60);
  std::normal_distribution<double> length(3.5, 1.0);
  std::vector<double> num, den;
  for (int i = 0; i < 1500; ++i) {
    const int d = steps(rng);
    double n = 0;
    for (int k = 0; k < d; ++k) n += std::max(1.0, length(rng));
    num.push_back(n);
    den.push_back(d);
  }
  double sn = 0, sd = 0;
  for (std::size_t i = 0; i < num.size(); ++i) sn += num[i], sd += den[i];
  const double r = sn / sd, dbar = sd / num.size();
  double ss = 0;
  for (std::size_t i = 0; i < num.size(); ++i) ss += (num[i] - r * den[i]) * (num[i] - r * den[i]);
  const double se = std::sqrt(ss / (num.size() * (num.size() - 1.0))) / dbar;
  const Interval ci = bootstrapRatio(num, den, 0.95, 4000, 3);
  EXPECT_DOUBLE_EQ(ci.estimate, r);
  EXPECT_NEAR(ci.low, r - 1.96 * se, 0.15 * 1.96 * se);
  EXPECT_NEAR(ci.high, r + 1.96 * se, 0.15 * 1.96 * se);
  const Interval one = bootstrapRatio(std::vector<double>{12.0}, std::vector<double>{4.0});
  EXPECT_DOUBLE_EQ(one.low, 3.0);
  EXPECT_DOUBLE_EQ(one.high, 3.0);
  EXPECT_THROW(bootstrapRatio(num, std::vector<double>{1.0}), dfi::ValidationError);
}

TEST(Statistics, PairedDifferenceSeesAConsistentGain) {
  std::vector<double> a, b;
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0, 0.05);
  for (int i = 0; i < 200; ++i) {
    const double base = 1.5 + (i % 7) * 0.5;  // prompts differ a lot...
    a.push_back(base);
    b.push_back(base + 0.2 + noise(rng));     // ...B is consistently 0.2 better
  }
  const Interval d = bootstrapPairedDifference(a, b);
  EXPECT_GT(d.low, 0.15);
  EXPECT_LT(d.high, 0.25);
  const Interval constant = bootstrapMean(std::vector<double>{2.0, 2.0, 2.0});
  EXPECT_DOUBLE_EQ(constant.low, 2.0);
  EXPECT_DOUBLE_EQ(constant.high, 2.0);
  EXPECT_THROW(bootstrapPairedDifference(a, std::vector<double>{1.0}), dfi::ValidationError);
}

// The expected ends are scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=sem) (scipy 1.17).
TEST(Statistics, StudentIntervalOfAFewRepeatsIsScipys) {
  const std::vector<double> four{3.9, 4.1, 4.3, 4.0};
  const Interval i4 = studentMean95(four);
  EXPECT_NEAR(i4.estimate, 4.075, 1e-12);
  EXPECT_NEAR(i4.low, 3.803246911620399, 2e-4);
  EXPECT_NEAR(i4.high, 4.346753088379602, 2e-4);
  const Interval i2 = studentMean95(std::vector<double>{1.0, 2.0});
  EXPECT_NEAR(i2.low, -4.853102368087347, 1e-3);
  EXPECT_NEAR(i2.high, 7.853102368087347, 1e-3);
  std::vector<double> many;  // 41 values: past the table, the Cornish-Fisher quantile
  for (int i = 0; i <= 40; ++i) many.push_back(1.0 + i * 0.05);
  const Interval i41 = studentMean95(many);
  EXPECT_NEAR(i41.low, 1.8109457084158378, 2e-4);
  EXPECT_NEAR(i41.high, 2.189054291584162, 2e-4);
  const Interval one = studentMean95(std::vector<double>{3.0});
  EXPECT_EQ(one.low, 3.0);
  EXPECT_EQ(one.high, 3.0);
}
