#pragma once
// The navigator panel: runs -> prompts -> steps with acceptance bars, filters (acceptance
// below x, a garble detector firing on what the drafter proposes, one run, regressions of one
// drafter against another), text search (also in the steps' token text) and keyboard
// navigation. Choosing a row selects it in the SessionContext; a selection made elsewhere
// is shown here.

#include <QPersistentModelIndex>
#include <QWidget>

#include "session/session_viewer.h"
#include "widgets/view_export.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QTimer;
class QTreeView;

namespace dfi::ui {

class NavigatorFilter;
class NavigatorModel;

class Navigator : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit Navigator(SessionContext* context, QWidget* parent = nullptr);
  ~Navigator() override;

  NavigatorModel* model() const { return model_; }
  NavigatorFilter* filter() const { return filter_; }
  QTreeView* tree() const { return tree_; }
  QLineEdit* searchField() const { return search_; }
  QComboBox* garbleChoice() const { return garble_; }  // item data: the detector bits, 0 = off
  QComboBox* runChoice() const { return run_; }        // item data: the run id; none = all runs
  QString matchesText() const;  // plain text, without the "Clear filters" link
  // Turns every filter off (the search text too): the "Clear filters" link of the message.
  void clearFilters();
  // Searches the steps' token text now instead of after the typing pause.
  void searchTokenTextNow();
  // Go > Next/Previous (Garbled) Block: selects the block after (direction 1) or before (-1)
  // the selected one in the tree's order (runs, prompts, steps, as filtered), with
  // `garbledOnly` the next whose proposal a garble detector flagged. False at either end.
  bool selectNeighbour(int direction, bool garbledOnly);

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override;
  QString exportBaseName() const override { return QStringLiteral("navigator"); }

 private:
  void updateRunChoices();  // after the model loaded
  void applyFilters();
  void updateMatches();
  QStringList activeFilterNames() const;  // the filters on, in words, for "Nothing matches"
  void showMatches(const QString& text, bool offerClear);
  void openRunsWhenFiltered();
  void selectCurrent(const QModelIndex& proxyIndex);

  SessionContext* context_;
  NavigatorModel* model_;
  NavigatorFilter* filter_;
  QTreeView* tree_;
  QLineEdit* search_;
  QLabel* matches_;  // how many prompts the filters keep, or that nothing matches
  QCheckBox* below_;
  QDoubleSpinBox* belowValue_;
  QComboBox* garble_;
  QComboBox* run_;
  QTimer* tokenSearchDelay_;
  bool tokenSearchPending_ = false;  // the token text of the steps is being searched
  QCheckBox* regression_;
  QComboBox* baselineRun_;
  QComboBox* worseRun_;
  QDoubleSpinBox* regressionMargin_;
  bool syncing_ = false;  // true while showing a selection made elsewhere
  QPersistentModelIndex openedForSelection_;  // the response a selection made elsewhere opened
};

}  // namespace dfi::ui
