#pragma once
// The positions panel: where in a block and where in the context a drafter loses acceptance,
// and whether its confidence means anything. Three plots of dfi/analysis/position_metrics.h,
// one curve per run (and step mode) overlaid with a legend: acceptance per draft slot, tau by
// the anchor's position (bins with their 95% interval over prompts), and the reliability
// diagram of the drafter's probability of its draft against how often it was accepted, beside
// the diagonal of a calibrated drafter. It follows the selected run; the Runs menu overlays
// more. The steps are read on a worker thread, once per run until the file changes.

#include <map>
#include <memory>
#include <set>
#include <vector>

#include <QThreadPool>
#include <QWidget>

#include "session/session_viewer.h"
#include "dfi/analysis/position_metrics.h"
#include "widgets/view_export.h"

class QCustomPlot;
class QLabel;
class QMenu;
class QToolButton;

namespace dfi::ui {

class ReloadWhenShown;

class PositionView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit PositionView(SessionContext* context, QWidget* parent = nullptr);
  ~PositionView() override;

  // The runs drawn: the selected one first, then those ticked in the Runs menu.
  std::vector<session::RunId> shownRuns() const;
  // Ticks (or unticks) a run in the Runs menu; the plots follow once its steps are read.
  void setRunOverlaid(session::RunId run, bool overlaid);
  // Reads whatever shown run is not read yet (on the worker) and redraws; computed() follows.
  // The panel calls it itself only while it is on screen (behind its tab it would slow the
  // opening of a big session), and once more when it comes forward.
  void reload();
  bool isComputing() const { return computing_; }

  QCustomPlot* slotPlot() const { return slotPlot_; }
  QCustomPlot* anchorPlot() const { return anchorPlot_; }
  QCustomPlot* reliabilityPlot() const { return reliabilityPlot_; }
  QMenu* runsMenu() const { return runsMenu_; }

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override { return this; }
  QString exportBaseName() const override { return QStringLiteral("positions"); }
  CsvTable exportData() override;  // the three plots' numbers, one table

 signals:
  void computed();

 private:
  struct Series {
    QString name;   // the run's full name (and mode), for the CSV
    QString label;  // the legend's: what tells it from the other curves
    analysis::PositionMetrics metrics;
  };
  void rebuildRunsMenu();
  void finish(quint64 generation, std::map<session::RunId, std::vector<analysis::PositionMetrics>> read,
              const QString& error);
  void redraw();
  std::vector<Series> shownSeries();
  void shortenLabels(std::vector<Series>& series);
  void drawSlots(const std::vector<Series>& series);
  void drawAnchors(const std::vector<Series>& series);
  void drawReliability(const std::vector<Series>& series);

  SessionContext* context_;
  QToolButton* runsButton_;
  QMenu* runsMenu_;
  QLabel* status_;
  QCustomPlot* slotPlot_;
  QCustomPlot* anchorPlot_;
  QCustomPlot* reliabilityPlot_;
  CsvTable slotData_, anchorData_, reliabilityData_;
  QString commonLabel_;  // the parts of the shown runs' names that every curve shares
  ReloadWhenShown* reloader_;  // reloads while on screen, once per quiet spell of a followed file

  QThreadPool pool_;
  quint64 generation_ = 0;
  bool computing_ = false;
  session::RunId selected_ = 0;
  std::set<session::RunId> overlaid_;
  std::map<session::RunId, std::vector<analysis::PositionMetrics>> cache_;
};

}  // namespace dfi::ui
