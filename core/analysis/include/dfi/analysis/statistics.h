#pragma once
// Summary statistics for comparing drafters: acceptance-length histograms, per-slot
// acceptance (survival) curves and bootstrap confidence intervals.

#include <cstdint>
#include <span>
#include <vector>

namespace dfi::analysis {

// counts[L] = number of steps with acceptance length L, for L in 0..blockSize (0 stays empty
// for live steps; it is kept so that index = length).
std::vector<std::int64_t> acceptanceHistogram(std::span<const int> acceptLengths, int blockSize);

// rates[i] = fraction of steps whose draft slot i+1 was accepted (acceptance length >= i+2),
// for i in 0..blockSize-2: the survival curve that falls off with depth.
std::vector<double> slotAcceptanceRates(std::span<const int> acceptLengths, int blockSize);

struct Interval {
  double estimate = 0;  // the statistic on the full sample
  double low = 0;
  double high = 0;

  bool operator==(const Interval&) const = default;
};

// Resamples of every bootstrap the tool shows, in the CLI's tables and in the GUI alike, so
// that the same run gets the same interval everywhere (same order of prompts, same seed). 1000
// keeps the compare view's 10k prompts x 4 runs within half a second on two busy cores; the
// interval's ends move by about 1% of its width against 2000.
inline constexpr int kBootstrapResamples = 1000;

// Percentile bootstrap interval of the mean (e.g. of per-prompt tau). Deterministic for a seed.
Interval bootstrapMean(std::span<const double> values, double confidence = 0.95,
                       int resamples = kBootstrapResamples, std::uint64_t seed = 0);

// 95% Student-t interval of the mean: for a handful of values, such as the tau of each of a
// few sampled repeats, where a percentile bootstrap has too few distinct resamples to be one.
Interval studentMean95(std::span<const double> values);

// Percentile bootstrap interval of a pooled ratio sum(numerators) / sum(denominators) over
// units resampled whole (vLLM's tau: accepted lengths over steps, resampling prompts).
Interval bootstrapRatio(std::span<const double> numerators, std::span<const double> denominators,
                        double confidence = 0.95, int resamples = kBootstrapResamples, std::uint64_t seed = 0);

// Below this many prompts no interval says "beyond noise": a percentile bootstrap over 1-7
// prompts resamples a handful of values, and its interval is far narrower than the spread of
// the mean (with 2 prompts a diagnosis of the tap-shifted demo drafter named the opposite cause
// of its 24-prompt verdict). The CLI, the GUI and the diagnosis all ask verdictPossible.
inline constexpr std::int64_t kMinPromptsForVerdict = 8;
inline constexpr bool verdictPossible(std::int64_t prompts) { return prompts >= kMinPromptsForVerdict; }

// Paired bootstrap of mean(b - a) over the same prompts: does B beat A beyond noise?
Interval bootstrapPairedDifference(std::span<const double> a, std::span<const double> b,
                                   double confidence = 0.95, int resamples = kBootstrapResamples,
                                   std::uint64_t seed = 0);

}  // namespace dfi::analysis
