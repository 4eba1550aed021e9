#pragma once
// Filters and sorting over the NavigatorModel: steps with acceptance below x, steps a garble
// detector flags in what the drafter proposes, one run, prompts where one drafter regresses
// against another, and a text search (prompt text and dataset, run name, drafter path, and the
// decoded draft/target text of a step). Step-level filters keep the prompts and runs above
// matching steps; prompt-level ones (search, regression) keep a prompt with all its steps.
//
// Not a QSortFilterProxyModel: that one re-filters and maps each parent's rows through
// QVariant roles and persistent indexes, which took a second for 200k steps, and sorting a
// filtered tree with many rows open froze the window. Here one pass over the plain step
// summaries builds the shown tree (sorted per level), and a change is one layoutChanged that
// moves only the persistent indexes that exist (the open rows and the selection).

#include <optional>
#include <unordered_set>
#include <vector>

#include <QAbstractProxyModel>

#include "dfi/session/records.h"

namespace dfi::ui {

class NavigatorModel;
struct NavigatorRun;
struct NavigatorPrompt;
struct NavigatorStep;

class NavigatorFilter : public QAbstractProxyModel {
  Q_OBJECT
 public:
  explicit NavigatorFilter(QObject* parent = nullptr);

  void setNavigatorModel(NavigatorModel* model);
  void setMaxAcceptance(std::optional<double> below);  // steps with acc+1 < below
  // Steps where any of these garble detectors (dfi/analysis/garble.h bits) fired on what the
  // drafter proposes (the accepted slots and the first mismatch); 0: off.
  void setGarbleDetectors(std::uint8_t detectors);
  void setRun(std::optional<session::RunId> run);  // only this run
  void setSearchText(const QString& text);
  // Steps whose decoded draft or target text contains the search text (NavigatorModel::
  // searchTokenText's answer); kept while the search text is `query`.
  void setTokenTextMatches(const QString& query, const std::vector<session::StepId>& steps);
  // Prompts of run `worse` whose tau is lower than in run `baseline` by more than `margin`.
  void setRegression(std::optional<std::pair<session::RunId, session::RunId>> baselineAndWorse, double margin);

  bool isActive() const;
  int shownPromptCount() const;
  int shownStepCount() const { return shownSteps_; }

  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
  QModelIndex mapToSource(const QModelIndex& proxyIndex) const override;
  QModelIndex mapFromSource(const QModelIndex& sourceIndex) const override;
  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  bool hasChildren(const QModelIndex& parent = {}) const override;

 private:
  // Rows of the source model shown, in display order, and where each source row is shown.
  struct ShownPrompt {
    int source = 0;
    std::vector<int> steps;
    std::vector<int> stepRow;  // by source step row; -1 when hidden
  };
  struct ShownRun {
    int source = 0;
    std::vector<ShownPrompt> prompts;
    std::vector<int> promptRow;  // by source prompt row; -1 when hidden
  };
  // A node by its source rows (-1 below its level): what a persistent index is kept as.
  struct SourcePath {
    int run = -1, prompt = -1, step = -1;
  };

  bool stepFiltersActive() const { return maxAcceptance_.has_value() || garbleDetectors_ != 0; }
  bool stepPasses(const NavigatorStep& step) const;
  bool promptPasses(const NavigatorRun& run, const NavigatorPrompt& prompt, bool runMatchesSearch) const;
  void build();    // shown_ from the source and the filters
  void relayout();  // build() inside a layout change that keeps the persistent indexes
  void resetFromSource();
  SourcePath pathOf(const QModelIndex& proxy) const;
  QModelIndex proxyIndexOf(const SourcePath& path, int column) const;
  void forwardDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles);

  NavigatorModel* model_ = nullptr;
  std::vector<ShownRun> shown_;
  std::vector<int> runRow_;  // by source run row; -1 when hidden
  int shownSteps_ = 0;
  int sortColumn_ = 0;
  Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
  std::optional<double> maxAcceptance_;
  std::uint8_t garbleDetectors_ = 0;
  std::optional<session::RunId> run_;
  QString search_;
  QString tokenQuery_;  // the search text tokenMatches_ answers
  std::unordered_set<session::StepId> tokenMatches_;
  std::optional<std::pair<session::RunId, session::RunId>> regression_;
  double regressionMargin_ = 0;
};

}  // namespace dfi::ui
