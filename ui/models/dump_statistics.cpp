#include "models/dump_statistics.h"

#include <filesystem>

#include "dfi/analysis/hidden_statistics.h"
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
  // Grouped as the session's records are: one series, named and placed like `ours`.
  return std::move(groupStatistics(analysis::hiddenStatisticRecords(values, shape[1], ours.tensor, ours.layer))
                       .statistics.front());
}

}  // namespace dfi::ui
