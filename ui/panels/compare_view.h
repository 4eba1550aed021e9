#pragma once
// The compare panel: every run of the open session (drafters, mask variants, step modes) on
// the same prompts. A tau table with bootstrap intervals (its ticks choose what the plots
// draw), acceptance-length histograms, per-slot acceptance curves, the per-prompt scatter of
// run A against run B, and the blocks where B accepted less than A; choosing one selects
// that block in every other panel and shows A's block beside B's. Reading and statistics run on a worker thread, and only
// while the panel is on screen: behind its tab it would slow the opening of a big session.

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <QThreadPool>
#include <QWidget>

#include "session/session_viewer.h"
#include "dfi/analysis/run_comparison.h"
#include "widgets/view_export.h"

class QComboBox;
class QLabel;
class QTabWidget;
class QTableView;

namespace dfi::ui {

class BlockPairView;
class BlockRegressionModel;
class ComparisonPlots;
class ReloadWhenShown;
class TauTableModel;

class CompareView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit CompareView(SessionContext* context, QWidget* parent = nullptr);
  ~CompareView() override;

  // Compares these series (what reload() reads from the session); the result arrives with
  // computed().
  void setSeries(std::vector<analysis::ComparedSeries> series);
  void reload();
  // Whether the session changed since the last reload while the panel was hidden.
  bool isStale() const;
  bool isComputing() const { return computing_; }
  // Chooses runs A and B by row of the tau table; the pair is recomputed on the worker.
  void setPair(int a, int b);
  // Runs A and B by run id, also before the runs are read (the overview's and the diagnosis's
  // links): applied once they are.
  void requestRuns(session::RunId a, session::RunId b);

  TauTableModel* tauModel() const { return tauModel_; }
  BlockRegressionModel* regressionModel() const { return regressionModel_; }
  QTableView* regressionTable() const { return regressionTable_; }
  ComparisonPlots* plots() const { return plots_; }
  // A's and B's block of the chosen regression, side by side (a tab beside the plots).
  BlockPairView* blockPair() const { return blockPair_; }
  QTabWidget* lowerTabs() const { return lowerTabs_; }
  const analysis::PairComparison& pair() const { return pair_; }

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override { return this; }
  QString exportBaseName() const override { return QStringLiteral("compare"); }
  CsvTable exportData() override;  // the tau table

 signals:
  void computed();

 private:
  struct Result;
  void start(std::shared_ptr<const std::vector<analysis::ComparedSeries>> series,
             std::shared_ptr<const std::vector<analysis::SeriesStatistics>> stats, int a, int b);
  void finish(quint64 generation, const std::shared_ptr<Result>& result);
  void redraw();
  void applyRequest();
  void selectRegression(const QModelIndex& index);

  SessionContext* context_;
  TauTableModel* tauModel_;
  BlockRegressionModel* regressionModel_;
  QComboBox* runA_;
  QComboBox* runB_;
  QLabel* status_;
  QTableView* tauTable_;
  QTableView* regressionTable_;
  ComparisonPlots* plots_;
  BlockPairView* blockPair_;
  QTabWidget* lowerTabs_;
  ReloadWhenShown* reloader_;  // reloads while on screen, once per quiet spell of a followed file

  QThreadPool pool_;
  quint64 generation_ = 0;
  bool computing_ = false;
  std::shared_ptr<const std::vector<analysis::ComparedSeries>> series_;
  std::shared_ptr<const std::vector<analysis::SeriesStatistics>> stats_;
  analysis::PairComparison pair_;
  int a_ = -1, b_ = -1;
  std::optional<std::pair<session::RunId, session::RunId>> requested_;  // runs A, B
};

}  // namespace dfi::ui
