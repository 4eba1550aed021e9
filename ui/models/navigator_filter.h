#pragma once
// Filters and sorting over the NavigatorModel: steps with acceptance below x, garbled steps,
// prompts where one drafter regresses against another, and a text search (prompt text and
// dataset, run name, drafter path). Step-level filters
// keep the prompts and runs above matching steps (recursive filtering); prompt-level ones
// (search, regression) keep a prompt with all its steps.

#include <optional>

#include <QSortFilterProxyModel>

#include "dfi/session/records.h"

namespace dfi::ui {

class NavigatorModel;

class NavigatorFilter : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit NavigatorFilter(QObject* parent = nullptr);

  void setNavigatorModel(NavigatorModel* model);
  void setMaxAcceptance(std::optional<double> below);  // steps with acc+1 < below
  void setGarbledOnly(bool garbled);
  void setSearchText(const QString& text);
  // Prompts of run `worse` whose tau is lower than in run `baseline` by more than `margin`.
  void setRegression(std::optional<std::pair<session::RunId, session::RunId>> baselineAndWorse, double margin);

  bool isActive() const;

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  bool stepFiltersActive() const { return maxAcceptance_.has_value() || garbledOnly_; }
  bool promptPasses(const QModelIndex& prompt) const;

  NavigatorModel* model_ = nullptr;
  std::optional<double> maxAcceptance_;
  bool garbledOnly_ = false;
  QString search_;
  std::optional<std::pair<session::RunId, session::RunId>> regression_;
  double regressionMargin_ = 0;
};

}  // namespace dfi::ui
