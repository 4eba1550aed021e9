#pragma once
// The hidden-state statistics panel (issue 9, item 2): for the selected block, per-position
// curves of mean, std, rms and abs-max of one tensor (each target tap, the drafter's fc output,
// its hidden_norm output, every drafter layer), its histogram, and markers where positions hold
// NaN or Inf values. Another run's block at the same prompt and anchor, or an imported external
// dump (safetensors, paired like `dflash-eval diff-dump`), is overlaid dashed, and the
// difference plotted below. The data are the step's statistics in the session (recorded with
// `dflash-eval run --hidden-stats`, or fetched by an inspect request through the engine).
// One more entry of the tensor box shows every tensor at once (stats_overview.h).

#include <memory>
#include <optional>
#include <vector>

#include "panels/block_probe_panel.h"
#include "panels/stats_overview.h"

class QComboBox;
class QCustomPlot;
class QPushButton;

namespace dfi::ui {

class ImportedDump;

class StatsView : public BlockProbePanel {
  Q_OBJECT
 public:
  explicit StatsView(SessionContext* context, QWidget* parent = nullptr);
  ~StatsView() override;

  QCustomPlot* curves() const { return curves_; }
  QCustomPlot* histogram() const { return histogram_; }
  QCustomPlot* difference() const { return difference_; }
  QComboBox* tensorBox() const { return tensorBox_; }
  QComboBox* compareBox() const { return compareBox_; }
  // Overlays the block of another step (another run at the same prompt and anchor); 0: none.
  void compareWithStep(session::StepId step);
  // Overlays an external dump's statistics (throws dfi::Error when it cannot be read).
  void importDump(const QString& path);
  void chooseSeries(int index);

  QString exportBaseName() const override { return QStringLiteral("statistics"); }
  CsvTable exportData() override;  // one row per position: A's statistics, B's, and A - B

 protected:
  void loadSelection() override;
  void showAnswer(const InspectAnswer& answer) override;

 private:
  void load();
  void fillCompareBox();
  void redraw();
  void replotShown();
  const StatisticSeries* current() const;
  bool isOverview() const;  // the "every tensor" entry is chosen
  StatsOverview overview() const;
  void drawOverview();
  // `a`'s series in what the block is compared with (another block, a dump); nullopt, with the
  // reason when there is one, when nothing is compared or it has no such series.
  std::optional<StatisticSeries> counterpart(const StatisticSeries& a, QString* why) const;
  std::int64_t firstPosition(const StatisticSeries& s) const;

  QComboBox* tensorBox_;
  QComboBox* compareBox_;
  QPushButton* import_;
  QCustomPlot* curves_;
  QCustomPlot* histogram_;
  QCustomPlot* difference_;
  std::int64_t earlierRows_ = 0;  // context rows prepended from the pass's earlier anchors
  session::StepId compareStep_ = 0;
  BlockProbes compareProbes_;
  std::unique_ptr<ImportedDump> dump_;
  bool updating_ = false;
};

}  // namespace dfi::ui
