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

// Each setter re-filters only when its value changes: the navigator sets all four on any
// change, and each pass visits every step of every prompt already shown.
void NavigatorFilter::setMaxAcceptance(std::optional<double> below) {
  if (below == maxAcceptance_) return;
  maxAcceptance_ = below;
  invalidateFilter();
}

void NavigatorFilter::setGarbledOnly(bool garbled) {
  if (garbled == garbledOnly_) return;
  garbledOnly_ = garbled;
  invalidateFilter();
}

void NavigatorFilter::setSearchText(const QString& text) {
  if (text.trimmed() == search_) return;
  search_ = text.trimmed();
  invalidateFilter();
}

void NavigatorFilter::setRegression(std::optional<std::pair<session::RunId, session::RunId>> baselineAndWorse,
                                    double margin) {
  if (baselineAndWorse == regression_ && (!regression_ || margin == regressionMargin_)) return;
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
  // Steps are read directly, not through QVariant roles: this runs for every step shown.
  if (const NavigatorStep* step = model_->stepAt(index)) {
    if (maxAcceptance_ && step->acceptLength >= *maxAcceptance_) return false;
    if (garbledOnly_ && step->garbledSlots == 0) return false;
    return promptPasses(sourceParent);
  }
  if (!sourceParent.isValid()) return false;  // a run: shown when something below it is
  return !stepFiltersActive() && promptPasses(index);
}

}  // namespace dfi::ui
