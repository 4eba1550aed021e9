#pragma once
// Runs -> prompts -> steps of the open session, with each node's acceptance (mean accept
// length tau for runs and prompts, acc+1 for a step) and garble counts. One pass over the
// steps builds compact summaries on a worker thread (its own reader, so a 200k-step file
// does not freeze the window); a followed file's new steps are inserted in place.

#include <atomic>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <QAbstractItemModel>
#include <QThreadPool>

#include "session/session_viewer.h"
#include "models/navigator_tree.h"
#include "models/tau_convention.h"

namespace dfi::ui {

class SessionContext;

class NavigatorModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { NameColumn, AcceptanceColumn, StepsColumn, GarbledColumn, ColumnCount };
  enum Kind { RunNode, PromptNode, StepNode };
  enum Role {
    KindRole = Qt::UserRole + 1,
    AcceptanceRole,          // double: tau (run, prompt) or accept length (step)
    AcceptanceFractionRole,  // double in [0, 1]: acceptance / block size
    GarbledRole,             // int: garbled steps (run, prompt) or garbled slots (step)
    SearchTextRole,          // what a text search looks at
    SortRole,                // a number (or the name) per column, for sorting
    RunIdRole,
    PromptIdRole,
    StepIdRole,
  };

  explicit NavigatorModel(SessionContext* context, QObject* parent = nullptr);
  ~NavigatorModel() override;

  // Re-reads everything (session opened or closed): empties the model now and fills it when
  // the worker is done, then emits loaded(). Steps appended meanwhile are applied after.
  void reload();
  bool isLoading() const { return loading_; }
  void appendSteps(const std::vector<session::StepRecord>& steps);

  Selection selectionAt(const QModelIndex& index) const;
  QModelIndex indexOf(const Selection& selection) const;  // the deepest node selected
  std::optional<double> promptAcceptance(session::RunId run, session::PromptId prompt) const;
  QList<QPair<session::RunId, QString>> runNames() const;
  // The step at a step node's index (the filter's fast path); null for a run or prompt.
  const NavigatorStep* stepAt(const QModelIndex& index) const;
  // Runs show their tau in this convention (prompts have one response: the conventions agree).
  void setTauConvention(TauConvention convention);
  TauConvention tauConvention() const { return tauConvention_; }
  // The tree as loaded, for the filter's passes over every step (no QVariant per step).
  const std::vector<NavigatorRun>& runs() const { return runs_; }
  std::optional<double> runTau(int runRow) const { return runTau(runs_[static_cast<std::size_t>(runRow)]); }

  // Looks for `query` in the decoded draft and target text of every step, on the worker (the
  // token arrays are not kept in the tree); emits tokenTextMatches when done. A newer query or
  // a reload drops an older one's answer.
  void searchTokenText(const QString& query);

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  void loaded();
  void tokenTextMatches(const QString& query, const std::vector<session::StepId>& steps);

 private:
  using Step = NavigatorStep;
  using Prompt = NavigatorPrompt;
  using Run = NavigatorRun;
  void finishLoad(quint64 generation, std::vector<Run> runs, const QString& error);
  int runRowOf(session::RunId run) const;
  int ensurePrompt(int runRow, session::PromptId prompt);
  QVariant runData(const Run& run, int column, int role) const;
  QVariant promptData(const Run& run, const Prompt& prompt, int column, int role) const;
  QVariant stepData(const Run& run, const Prompt& prompt, const Step& step, int column, int role) const;
  std::optional<double> runTau(const Run& run) const;

  SessionContext* context_;
  std::vector<Run> runs_;
  QThreadPool pool_;
  quint64 generation_ = 0;  // of the newest reload; older results are dropped
  std::atomic<quint64> searchGeneration_ = 0;  // of the newest token-text search (the worker reads it)
  bool loading_ = false;
  std::vector<session::StepRecord> appendedWhileLoading_;
  TauConvention tauConvention_ = TauConvention::Reference;
  // A run's tau by run id, with the step count it was computed at (a followed run grows).
  mutable std::unordered_map<session::RunId, std::pair<std::int64_t, double>> runTaus_;
};

}  // namespace dfi::ui
