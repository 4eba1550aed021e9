#pragma once
// Per-position statistics of an imported external dump (a training pipeline's or transformers'
// hidden states, safetensors), computed by the definition the engine records its own with
// (dfi/analysis/hidden_statistics.h: mean, std, rms, abs-max over the finite values, NaN and Inf
// counts), so a run's recorded statistics can be overlaid with the dump's. Tensors are paired by core/analysis tap_names (the rules of
// `dflash-eval diff-dump`: transformers' hidden_states.<k> is our hidden.<k-1>, the target tap
// of layer k-1). Torch-free.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <QObject>
#include <QString>

#include "models/block_probes.h"

namespace dfi::tensorfile {
class SafetensorsFile;
}

namespace dfi::ui {

class ImportedDump {
 public:
  // Throws dfi::IoError / dfi::FormatError naming the file.
  explicit ImportedDump(const std::string& path);
  ~ImportedDump();
  const std::string& path() const { return path_; }
  QString fileName() const;

  // The dump's counterpart of `ours` over positions [end - n, end) (n = ours.positions()), or
  // nullopt (with the reason) when the dump has no such tensor or it is too short.
  std::optional<StatisticSeries> seriesFor(const StatisticSeries& ours, std::int64_t end, QString* why) const;

 private:
  std::string path_;
  std::unique_ptr<tensorfile::SafetensorsFile> file_;
};

}  // namespace dfi::ui
