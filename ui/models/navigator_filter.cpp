#include "models/navigator_filter.h"

#include "models/navigator_model.h"

namespace dfi::ui {

NavigatorFilter::NavigatorFilter(QObject* parent) : QSortFilterProxyModel(parent) {
  setRecursiveFilteringEnabled(true);
  setSortRole(NavigatorModel::SortRole);
}

void NavigatorFilter::setNavigatorModel(NavigatorModel* model) {
  model_ = model;
  setSourceModel(model);
}

void NavigatorFilter::setMaxAcceptance(std::optional<double> below) {
  maxAcceptance_ = below;
  invalidateFilter();
}

void NavigatorFilter::setGarbledOnly(bool garbled) {
  garbledOnly_ = garbled;
  invalidateFilter();
}

void NavigatorFilter::setSearchText(const QString& text) {
  search_ = text.trimmed();
  invalidateFilter();
}

void NavigatorFilter::setRegression(std::optional<std::pair<session::RunId, session::RunId>> baselineAndWorse,
                                    double margin) {
  regression_ = baselineAndWorse;
  regressionMargin_ = margin;
  invalidateFilter();
}

bool NavigatorFilter::isActive() const {
  return stepFiltersActive() || !search_.isEmpty() || regression_.has_value();
}

bool NavigatorFilter::promptPasses(const QModelIndex& prompt) const {
  // The search looks at the prompt (dataset, text) and at its run (name, drafter).
  if (!search_.isEmpty() &&
      !prompt.data(NavigatorModel::SearchTextRole).toString().contains(search_, Qt::CaseInsensitive) &&
      !prompt.parent().data(NavigatorModel::SearchTextRole).toString().contains(search_, Qt::CaseInsensitive))
    return false;
  if (regression_) {
    const auto promptId = prompt.data(NavigatorModel::PromptIdRole).value<session::PromptId>();
    if (prompt.data(NavigatorModel::RunIdRole).value<session::RunId>() != regression_->second) return false;
    const std::optional<double> baseline = model_->promptAcceptance(regression_->first, promptId);
    const std::optional<double> worse = model_->promptAcceptance(regression_->second, promptId);
    if (!baseline || !worse || *worse >= *baseline - regressionMargin_) return false;
  }
  return true;
}

bool NavigatorFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  if (!model_ || !isActive()) return true;
  const QModelIndex index = model_->index(sourceRow, 0, sourceParent);
  switch (index.data(NavigatorModel::KindRole).toInt()) {
    case NavigatorModel::RunNode:
      return false;  // shown when something below it is
    case NavigatorModel::PromptNode:
      return !stepFiltersActive() && promptPasses(index);
    default:
      if (maxAcceptance_ && index.data(NavigatorModel::AcceptanceRole).toDouble() >= *maxAcceptance_) return false;
      if (garbledOnly_ && index.data(NavigatorModel::GarbledRole).toInt() == 0) return false;
      return promptPasses(sourceParent);
  }
}

}  // namespace dfi::ui
