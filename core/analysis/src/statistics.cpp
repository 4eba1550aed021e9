#include "dfi/analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {

double mean(std::span<const double> v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The resampling draws: splitmix64 (Steele et al. 2014; passes BigCrush) and Lemire's
// multiply-shift to an index. A view bootstraps 10k prompts x several runs while the user
// waits, and this is several times faster than mt19937_64 with uniform_int_distribution; the
// multiply-shift's bias (at most n / 2^32 per draw: 2e-6 for 10k prompts) is far below what a
// percentile interval can show.
class IndexDraws {
 public:
  explicit IndexDraws(std::uint64_t seed) : state_(seed) {}
  std::size_t below(std::size_t n) {
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<std::size_t>(((z >> 32) * static_cast<std::uint64_t>(n)) >> 32);  // n < 2^32
  }

 private:
  std::uint64_t state_;
};

// Linear interpolation between order statistics (numpy's default "linear" percentile).
double percentile(std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// The estimate with the central `confidence` range of its bootstrap replicates.
Interval percentileInterval(double estimate, std::vector<double> replicates, double confidence) {
  std::sort(replicates.begin(), replicates.end());
  const double tail = (1.0 - confidence) / 2;
  return {estimate, percentile(replicates, tail), percentile(replicates, 1.0 - tail)};
}

}  // namespace

std::vector<std::int64_t> acceptanceHistogram(std::span<const int> acceptLengths, int blockSize) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(blockSize) + 1, 0);
  for (int length : acceptLengths)
    if (length >= 0 && length <= blockSize) ++counts[static_cast<std::size_t>(length)];
  return counts;
}

std::vector<double> slotAcceptanceRates(std::span<const int> acceptLengths, int blockSize) {
  std::vector<double> rates(static_cast<std::size_t>(std::max(blockSize - 1, 0)), 0.0);
  if (acceptLengths.empty()) return rates;
  for (int length : acceptLengths)
    for (int slot = 1; slot < blockSize && slot < length; ++slot) rates[slot - 1] += 1;
  for (double& r : rates) r /= static_cast<double>(acceptLengths.size());
  return rates;
}

Interval bootstrapMean(std::span<const double> values, double confidence, int resamples,
                       std::uint64_t seed) {
  Interval out{mean(values), mean(values), mean(values)};
  if (values.size() < 2) return out;
  IndexDraws draws(seed);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (double& m : means) {
    double sum = 0;
    for (std::size_t i = 0; i < values.size(); ++i) sum += values[draws.below(values.size())];
    m = sum / static_cast<double>(values.size());
  }
  return percentileInterval(out.estimate, std::move(means), confidence);
}

Interval studentMean95(std::span<const double> values) {
  const double m = mean(values);
  if (values.size() < 2) return {m, m, m};
  // t(0.975, df) for df = 1..30; above, the Cornish-Fisher term z + (z^3 + z) / (4 df), within
  // 1e-3 of the quantile there.
  static constexpr double kT975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                     2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                     2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  const std::size_t df = values.size() - 1;
  const double t = df <= 30 ? kT975[df - 1] : 1.959964 + 2.3715 / static_cast<double>(df);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  const double halfWidth = t * std::sqrt(squares / static_cast<double>(df) / static_cast<double>(values.size()));
  return {m, m - halfWidth, m + halfWidth};
}

Interval bootstrapRatio(std::span<const double> numerators, std::span<const double> denominators, double confidence,
                        int resamples, std::uint64_t seed) {
  if (numerators.size() != denominators.size())
    throw ValidationError("ratio bootstrap needs a denominator per numerator (" + std::to_string(numerators.size()) +
                          " vs " + std::to_string(denominators.size()) + ")");
  const auto ratio = [](double num, double den) { return den > 0 ? num / den : 0.0; };
  double num = 0, den = 0;
  for (std::size_t i = 0; i < numerators.size(); ++i) num += numerators[i], den += denominators[i];
  Interval out{ratio(num, den), ratio(num, den), ratio(num, den)};
  if (numerators.size() < 2) return out;
  IndexDraws draws(seed);
  std::vector<double> ratios(static_cast<std::size_t>(resamples));
  for (double& r : ratios) {
    double n = 0, d = 0;
    for (std::size_t i = 0; i < numerators.size(); ++i) {
      const std::size_t k = draws.below(numerators.size());
      n += numerators[k];
      d += denominators[k];
    }
    r = ratio(n, d);
  }
  return percentileInterval(out.estimate, std::move(ratios), confidence);
}

Interval bootstrapPairedDifference(std::span<const double> a, std::span<const double> b,
                                   double confidence, int resamples, std::uint64_t seed) {
  if (a.size() != b.size())
    throw ValidationError("paired bootstrap needs the same prompts on both sides (" +
                          std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")");
  std::vector<double> differences(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) differences[i] = b[i] - a[i];
  return bootstrapMean(differences, confidence, resamples, seed);
}

}  // namespace dfi::analysis
