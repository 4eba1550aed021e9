#pragma once
// The statistics panel's overview of every tensor of a block (StatsView's "overview: every
// tensor" entry, beside its one-tensor curves): one point per tensor (each target tap, the
// drafter's fc and hidden_norm outputs, every drafter layer) of a per-position statistic
// summarised over the positions (the mean of std and rms, the max of abs-max), so where the
// hidden state grows, or turns NaN, along the model shows at a glance. The tensors of what the
// block is compared with (another run's block, an imported dump) are drawn dashed as B, and
// A - B on the difference plot.

#include <optional>
#include <vector>

#include <QCoreApplication>
#include <QString>

#include "models/block_probes.h"
#include "widgets/view_export.h"

class QCustomPlot;

namespace dfi::ui {

class StatsOverview {
  Q_DECLARE_TR_FUNCTIONS(StatsOverview)

 public:
  // `others[i]`: the counterpart of `tensors[i]` in what the block is compared with, if any.
  // Made where it is drawn or exported: it refers to `tensors`.
  StatsOverview(const std::vector<StatisticSeries>& tensors,
                std::vector<std::optional<StatisticSeries>> others);

  bool compared() const;  // some tensor has a counterpart: the difference is drawn
  // Draws onto the panel's cleared plots (`difference` only when compared()) without
  // replotting; returns the note for the status line (which tensors hold NaN or Inf).
  QString draw(QCustomPlot& curves, QCustomPlot& difference) const;
  CsvTable table() const;  // one row per tensor: A's summaries, then B's

 private:
  const std::vector<StatisticSeries>& tensors_;
  std::vector<std::optional<StatisticSeries>> others_;
};

}  // namespace dfi::ui
