#pragma once
// The navigator panel: runs -> prompts -> steps with acceptance bars, filters (acceptance
// below x, garbled, regressions of one drafter against another), text search and keyboard
// navigation. Choosing a row selects it in the SessionContext; a selection made elsewhere
// is shown here.

#include <QWidget>

#include "context/session_viewer.h"
#include "widgets/view_export.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
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
  QString matchesText() const;

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override;
  QString exportBaseName() const override { return QStringLiteral("navigator"); }

 private:
  void updateRunChoices();  // after the model loaded
  void applyFilters();
  void selectCurrent(const QModelIndex& proxyIndex);

  SessionContext* context_;
  NavigatorModel* model_;
  NavigatorFilter* filter_;
  QTreeView* tree_;
  QLineEdit* search_;
  QLabel* matches_;  // how many prompts the filters keep, or that nothing matches
  QCheckBox* below_;
  QDoubleSpinBox* belowValue_;
  QCheckBox* garbled_;
  QCheckBox* regression_;
  QComboBox* baselineRun_;
  QComboBox* worseRun_;
  QDoubleSpinBox* regressionMargin_;
  bool syncing_ = false;  // true while showing a selection made elsewhere
};

}  // namespace dfi::ui
