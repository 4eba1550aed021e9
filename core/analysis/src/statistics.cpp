#include "dfi/analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {

double mean(std::span<const double> v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Linear interpolation between order statistics (numpy's default "linear" percentile).
double percentile(std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
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
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (double& m : means) {
    double sum = 0;
    for (std::size_t i = 0; i < values.size(); ++i) sum += values[pick(rng)];
    m = sum / static_cast<double>(values.size());
  }
  std::sort(means.begin(), means.end());
  const double tail = (1.0 - confidence) / 2;
  out.low = percentile(means, tail);
  out.high = percentile(means, 1.0 - tail);
  return out;
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
