#include "dfi/analysis/hidden_statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "dfi/session/hidden_statistics.h"

namespace dfi::analysis {
namespace {

namespace hs = session::hidden_statistics;

// One row's statistics in hs::kPerPositionStats order: mean, std, rms, absmax, nan, inf.
std::array<double, hs::kPerPositionStats.size()> rowStatistics(std::span<const double> row) {
  double sum = 0, squares = 0, absMax = 0;
  std::int64_t finite = 0, nan = 0, inf = 0;
  for (double v : row) {
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++inf;
    } else {
      ++finite;
      sum += v;
      squares += v * v;
      absMax = std::max(absMax, std::abs(v));
    }
  }
  if (finite == 0) return {0, 0, 0, 0, static_cast<double>(nan), static_cast<double>(inf)};
  const double n = static_cast<double>(finite);
  const double mean = sum / n;
  // The deviations in a second pass: sum(x^2)/n - mean^2 cancels badly when |mean| >> std.
  double deviations = 0;
  for (double v : row)
    if (std::isfinite(v)) deviations += (v - mean) * (v - mean);
  return {mean, std::sqrt(deviations / n), std::sqrt(squares / n), absMax, static_cast<double>(nan),
          static_cast<double>(inf)};
}

}  // namespace

std::vector<session::StatisticRecord> hiddenStatisticRecords(std::span<const double> values, std::int64_t hidden,
                                                             std::string_view tensor, int layer) {
  const std::size_t width = hidden > 0 ? static_cast<std::size_t>(hidden) : 0;
  const std::size_t rows = width > 0 ? values.size() / width : 0;
  const std::span<const double> matrix = values.first(rows * width);

  std::array<std::vector<float>, hs::kPerPositionStats.size()> perRow;
  for (auto& column : perRow) column.resize(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const auto stats = rowStatistics(matrix.subspan(r * width, width));
    for (std::size_t s = 0; s < stats.size(); ++s) perRow[s][r] = static_cast<float>(stats[s]);
  }

  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : matrix)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  std::vector<float> counts(hs::kHistogramBins, 0.0f);
  if (lo > hi) {
    lo = hi = 0;  // no finite value
  } else {
    const double binWidth = hi > lo ? (hi - lo) / hs::kHistogramBins : 1.0;
    for (double v : matrix)
      if (std::isfinite(v))
        counts[static_cast<std::size_t>(std::clamp<double>(std::floor((v - lo) / binWidth), 0, hs::kHistogramBins - 1))] += 1;
  }

  std::vector<session::StatisticRecord> records;
  auto add = [&](std::string_view stat, std::vector<float> v) {
    session::StatisticRecord record;
    record.name = hs::statisticName(tensor, stat);
    record.layer = layer;
    record.values = std::move(v);
    records.push_back(std::move(record));
  };
  for (std::size_t s = 0; s < perRow.size(); ++s) add(hs::kPerPositionStats[s], std::move(perRow[s]));
  add(hs::kHistogram, std::move(counts));
  add(hs::kHistogramRange, {static_cast<float>(lo), static_cast<float>(hi)});
  return records;
}

}  // namespace dfi::analysis
