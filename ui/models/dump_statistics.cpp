#include "models/dump_statistics.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "dfi/analysis/tap_names.h"
#include "dfi/session/hidden_statistics.h"
#include "dfi/tensorfile/element_values.h"
#include "dfi/tensorfile/safetensors_file.h"

namespace dfi::ui {
namespace {

namespace hs = session::hidden_statistics;

// The name the engine's own dump (`dflash-eval forward`) gives the tensor of a series.
std::string ourDumpName(const StatisticSeries& s) {
  if (s.tensor == hs::kTargetTap) return "hidden." + std::to_string(s.layer);
  return s.layer >= 0 ? s.tensor + "." + std::to_string(s.layer) : s.tensor;
}

}  // namespace

ImportedDump::ImportedDump(const std::string& path)
    : path_(path), file_(std::make_unique<tensorfile::SafetensorsFile>(tensorfile::SafetensorsFile::open(path))) {}

ImportedDump::~ImportedDump() = default;

QString ImportedDump::fileName() const {
  return QString::fromStdString(std::filesystem::path(path_).filename().string());
}

StatisticSeries statisticsOfRows(const std::vector<double>& values, std::int64_t hidden) {
  StatisticSeries s;
  const std::int64_t rows = hidden > 0 ? static_cast<std::int64_t>(values.size()) / hidden : 0;
  for (const auto name : hs::kPerPositionStats) s.stats[std::string(name)].resize(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0, squares = 0, absmax = 0;
    std::int64_t nan = 0, inf = 0, finite = 0;
    for (std::int64_t i = 0; i < hidden; ++i) {
      const double v = values[static_cast<std::size_t>(r * hidden + i)];
      if (std::isnan(v)) { ++nan; continue; }
      if (std::isinf(v)) { ++inf; continue; }
      ++finite;
      sum += v;
      squares += v * v;
      absmax = std::max(absmax, std::abs(v));
    }
    const double n = std::max<double>(1, static_cast<double>(finite));
    const double mean = sum / n;
    const auto at = static_cast<std::size_t>(r);
    s.stats["mean"][at] = static_cast<float>(mean);
    s.stats["std"][at] = static_cast<float>(std::sqrt(std::max(0.0, squares / n - mean * mean)));
    s.stats["rms"][at] = static_cast<float>(std::sqrt(squares / n));
    s.stats["absmax"][at] = static_cast<float>(absmax);
    s.stats["nan"][at] = static_cast<float>(nan);
    s.stats["inf"][at] = static_cast<float>(inf);
  }
  // The histogram of every finite value, 64 bins over [min, max], as the engine records it.
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (lo <= hi) {
    std::vector<float> counts(hs::kHistogramBins, 0.0f);
    const double width = hi > lo ? (hi - lo) / hs::kHistogramBins : 1.0;
    for (double v : values)
      if (std::isfinite(v))
        counts[static_cast<std::size_t>(std::clamp<double>(std::floor((v - lo) / width), 0, hs::kHistogramBins - 1))] += 1;
    s.stats[std::string(hs::kHistogram)] = std::move(counts);
    s.stats[std::string(hs::kHistogramRange)] = {static_cast<float>(lo), static_cast<float>(hi)};
  }
  return s;
}

std::optional<StatisticSeries> ImportedDump::seriesFor(const StatisticSeries& ours, std::int64_t end, QString* why) const {
  auto fail = [&](const QString& text) -> std::optional<StatisticSeries> {
    if (why) *why = text;
    return std::nullopt;
  };
  analysis::TapNames mine{"session", {ourDumpName(ours)}};
  analysis::TapNames theirs{path_, {}};
  for (const auto& t : file_->tensors()) theirs.names.push_back(t.name);
  const analysis::TapMatching matching = analysis::matchTapNames(mine, theirs, {});
  if (matching.pairs.empty())
    return fail(QObject::tr("%1 has no tensor for %2 (%3)").arg(fileName(), ours.label(),
                                                                 QString::fromStdString(mine.names.front())));
  const std::string& name = matching.pairs.front().theirs;
  const tensorfile::TensorView view = file_->view(name);
  std::vector<std::int64_t> shape = view.info().shape;
  while (shape.size() > 2 && shape.front() == 1) shape.erase(shape.begin());
  if (shape.size() != 2)
    return fail(QObject::tr("%1 in %2 is not [positions, hidden]").arg(QString::fromStdString(name), fileName()));
  const auto n = static_cast<std::int64_t>(ours.positions());
  const std::int64_t first = end - n;
  if (first < 0 || end > shape[0])
    return fail(QObject::tr("%1 in %2 has %3 positions; the block needs %4..%5")
                    .arg(QString::fromStdString(name), fileName())
                    .arg(shape[0])
                    .arg(first)
                    .arg(end - 1));
  std::vector<double> values(static_cast<std::size_t>(n * shape[1]));
  tensorfile::readElements(view, first * shape[1], values);
  StatisticSeries s = statisticsOfRows(values, shape[1]);
  s.tensor = ours.tensor;
  s.layer = ours.layer;
  return s;
}

}  // namespace dfi::ui
