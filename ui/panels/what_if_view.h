#pragma once
// The What-if panel: what the selected teacher-forced run says about settings it did not run
// (dfi/analysis/budget_what_if.h, the rows `summary --what-if` prints): tau with its 95% interval
// for every verify length up to the block and every DDTree budget the stored top-k can fill,
// plotted against the tokens each verifies, and with a cost model the expected speedup over
// target-only decoding, the best setting marked. The cost model is the one `run
// --calibrate-cost` recorded with the run, or a JSON file the user loads (the serving GPU's
// figures). The steps are read on a worker thread, once per run until the file changes.

#include <map>
#include <optional>
#include <vector>

#include <QThreadPool>
#include <QWidget>

#include "dfi/analysis/budget_what_if.h"
#include "session/session_viewer.h"
#include "widgets/view_export.h"

class QCustomPlot;
class QLabel;
class QPushButton;
class QTableWidget;

namespace dfi::ui {

class ReloadWhenShown;

class WhatIfView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit WhatIfView(SessionContext* context, QWidget* parent = nullptr);
  ~WhatIfView() override;

  // Reads the selected run's steps (on the worker) unless already read; computed() follows.
  void reload();
  bool isComputing() const { return computing_; }
  // A cost model file for the speedup instead of the run's own; an empty path goes back to it.
  // Returns false (and reports the file's error) when the file cannot be read.
  bool loadCostModel(const QString& path);

  const std::vector<analysis::WhatIfRow>& rows() const { return rows_; }
  QTableWidget* table() const { return table_; }
  QCustomPlot* tauPlot() const { return tauPlot_; }
  QCustomPlot* speedupPlot() const { return speedupPlot_; }

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override { return this; }
  QString exportBaseName() const override { return QStringLiteral("what-if"); }
  CsvTable exportData() override;

 signals:
  void computed();

 private:
  // What the worker reads of a run: its steps and, if it was calibrated, its cost model.
  struct RunRead {
    std::vector<session::StepRecord> steps;
    std::optional<analysis::CostModel> cost;
    int blockSize = 0;
    int topK = 0;
    std::vector<int> treeBudgets;  // analysis::treeBudgetsFor the run
    bool teacherForced = false;
  };
  void finish(quint64 generation, session::RunId run, std::optional<RunRead> read, const QString& error);
  void recompute();
  void redraw();
  void fillTable();
  void drawTau();
  void drawSpeedup();
  void chooseCostFile();

  SessionContext* context_;
  QLabel* status_;
  QPushButton* costButton_;
  QTableWidget* table_;
  QCustomPlot* tauPlot_;
  QCustomPlot* speedupPlot_;
  ReloadWhenShown* reloader_;

  QThreadPool pool_;
  quint64 generation_ = 0;
  bool computing_ = false;
  session::RunId selected_ = 0;
  std::map<session::RunId, RunRead> cache_;
  std::optional<analysis::CostModel> loadedCost_;  // the user's file, over the run's own
  std::optional<analysis::CostModel> cost_;         // the one the rows use
  std::vector<analysis::WhatIfRow> rows_;
};

}  // namespace dfi::ui
