#pragma once
// The hidden-state statistics panel (issue 9, item 2): for the selected block, per-position
// curves of mean, std, rms and abs-max of one tensor (each target tap, the drafter's fc output,
// its hidden_norm output, every drafter layer), its histogram, and markers where positions hold
// NaN or Inf values. Another run's block at the same prompt and anchor, or an imported external
// dump (safetensors, paired like `dflash-eval diff-dump`), is overlaid dashed, and the
// difference plotted below. The data are the step's statistics in the session (recorded with
// `dflash-eval run --hidden-stats`, or fetched by an inspect request through the engine).

#include <memory>
#include <optional>
#include <vector>

#include <QWidget>

#include "context/session_viewer.h"
#include "models/block_probes.h"
#include "widgets/view_export.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;

namespace dfi::ui {

class ImportedDump;
class InspectClient;
struct InspectAnswer;

class StatsView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit StatsView(SessionContext* context, InspectClient* engine = nullptr, QWidget* parent = nullptr);
  ~StatsView() override;

  QCustomPlot* curves() const { return curves_; }
  QCustomPlot* histogram() const { return histogram_; }
  QCustomPlot* difference() const { return difference_; }
  QComboBox* tensorBox() const { return tensorBox_; }
  QComboBox* compareBox() const { return compareBox_; }
  QString headline() const;
  QString status() const;
  const BlockProbes& probes() const { return probes_; }
  // Overlays the block of another step (another run at the same prompt and anchor); 0: none.
  void compareWithStep(session::StepId step);
  // Overlays an external dump's statistics (throws dfi::Error when it cannot be read).
  void importDump(const QString& path);
  void chooseSeries(int index);

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;

  QWidget* exportTarget() override { return this; }
  QString exportBaseName() const override { return QStringLiteral("statistics"); }
  CsvTable exportData() override;  // one row per position: A's statistics, B's, and A - B

 public slots:
  void fetchFromEngine();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void loadSelection();  // reads selection_'s block
  // In a shown window but not shown itself (a tab behind another): loading can wait. A view
  // never shown (headless render, tests) loads at once.
  bool behindAnotherTab() const { return window()->isVisible() && !isVisible(); }
  void load();
  void fillCompareBox();
  void redraw();
  void showAnswer(const InspectAnswer& answer);
  const StatisticSeries* current() const;
  bool isOverview() const;  // the "every tensor" entry is chosen
  void drawOverview();
  std::vector<std::optional<StatisticSeries>> othersForOverview() const;
  std::optional<StatisticSeries> other(QString* why) const;
  std::int64_t firstPosition(const StatisticSeries& s) const;

  SessionContext* context_;
  InspectClient* engine_;
  QLabel* headline_;
  QComboBox* tensorBox_;
  QComboBox* compareBox_;
  QPushButton* import_;
  QPushButton* fetch_;
  QLabel* status_;
  QCustomPlot* curves_;
  QCustomPlot* histogram_;
  QCustomPlot* difference_;
  Selection selection_;
  std::optional<session::StepRecord> step_;
  BlockProbes probes_;
  session::StepId compareStep_ = 0;
  BlockProbes compareProbes_;
  std::unique_ptr<ImportedDump> dump_;
  bool updating_ = false;
  bool stale_ = false;  // selection_ changed while hidden: read it when shown
};

}  // namespace dfi::ui
