#include "models/navigator_filter.h"

#include <algorithm>
#include <functional>

#include "models/navigator_ids.h"
#include "models/navigator_model.h"

namespace dfi::ui {
namespace {

using navigator_ids::childId;
using navigator_ids::promptOfId;
using navigator_ids::runOfId;

// Rows [0, n) ordered by `key` (ascending or descending), ties in source order.
template <typename Key>
std::vector<int> sortedRows(std::vector<int> rows, Qt::SortOrder order, Key key) {
  std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) {
    return order == Qt::AscendingOrder ? key(a) < key(b) : key(b) < key(a);
  });
  return rows;
}

}  // namespace

NavigatorFilter::NavigatorFilter(QObject* parent) : QAbstractProxyModel(parent) {}

void NavigatorFilter::setNavigatorModel(NavigatorModel* model) {
  if (model_) disconnect(model_, nullptr, this, nullptr);
  model_ = model;
  QAbstractProxyModel::setSourceModel(model);
  connect(model, &QAbstractItemModel::modelAboutToBeReset, this, [this] {
    beginResetModel();
    shown_.clear();
    runRow_.clear();
  });
  connect(model, &QAbstractItemModel::modelReset, this, [this] {
    build();
    endResetModel();
  });
  // A followed file appends steps, prompts and runs: the source rows already shown keep their
  // numbers, so one relayout places the new ones.
  connect(model, &QAbstractItemModel::rowsInserted, this, &NavigatorFilter::relayout);
  connect(model, &QAbstractItemModel::dataChanged, this, &NavigatorFilter::forwardDataChanged);
  connect(model, &QAbstractItemModel::headerDataChanged, this, &QAbstractItemModel::headerDataChanged);
  resetFromSource();
}

void NavigatorFilter::resetFromSource() {
  beginResetModel();
  build();
  endResetModel();
}

// Each setter re-filters only when its value changes: the navigator sets all of them on any change.
void NavigatorFilter::setMaxAcceptance(std::optional<double> below) {
  if (below == maxAcceptance_) return;
  maxAcceptance_ = below;
  relayout();
}

void NavigatorFilter::setGarbleDetectors(std::uint8_t detectors) {
  if (detectors == garbleDetectors_) return;
  garbleDetectors_ = detectors;
  relayout();
}

void NavigatorFilter::setRun(std::optional<session::RunId> run) {
  if (run == run_) return;
  run_ = run;
  relayout();
}

void NavigatorFilter::setSearchText(const QString& text) {
  if (text.trimmed() == search_) return;
  search_ = text.trimmed();
  relayout();
}

void NavigatorFilter::setTokenTextMatches(const QString& query, const std::vector<session::StepId>& steps) {
  tokenQuery_ = query.trimmed();
  tokenMatches_ = {steps.begin(), steps.end()};
  if (tokenQuery_ == search_) relayout();
}

void NavigatorFilter::setRegression(std::optional<std::pair<session::RunId, session::RunId>> baselineAndWorse,
                                    double margin) {
  if (baselineAndWorse == regression_ && (!regression_ || margin == regressionMargin_)) return;
  regression_ = baselineAndWorse;
  regressionMargin_ = margin;
  relayout();
}

bool NavigatorFilter::isActive() const {
  return stepFiltersActive() || !search_.isEmpty() || regression_.has_value() || run_.has_value();
}

int NavigatorFilter::shownPromptCount() const {
  int prompts = 0;
  for (const ShownRun& run : shown_) prompts += static_cast<int>(run.prompts.size());
  return prompts;
}

bool NavigatorFilter::stepPasses(const NavigatorStep& step) const {
  if (maxAcceptance_ && step.acceptLength >= *maxAcceptance_) return false;
  if (garbleDetectors_ && !(step.proposedGarble & garbleDetectors_)) return false;
  return true;
}

bool NavigatorFilter::promptPasses(const NavigatorRun& run, const NavigatorPrompt& prompt, bool runMatchesSearch) const {
  if (!search_.isEmpty() && !runMatchesSearch && !prompt.dataset.contains(search_, Qt::CaseInsensitive) &&
      !prompt.text.contains(search_, Qt::CaseInsensitive))
    return false;
  if (regression_) {
    if (run.record.runId != regression_->second) return false;
    const std::optional<double> baseline = model_->promptAcceptance(regression_->first, prompt.id);
    const std::optional<double> worse = prompt.acceptance.tau();
    if (!baseline || !worse || *worse >= *baseline - regressionMargin_) return false;
  }
  return true;
}

void NavigatorFilter::build() {
  shown_.clear();
  runRow_.clear();
  shownSteps_ = 0;
  if (!model_) return;
  const std::vector<NavigatorRun>& runs = model_->runs();
  runRow_.assign(runs.size(), -1);
  const bool active = isActive();
  const bool tokenSearch = !search_.isEmpty() && tokenQuery_ == search_;
  // A prompt that fails the search may still show the steps whose token text matches.
  const bool searchOnlyPromptFilter = !regression_;
  const int column = sortColumn_;
  std::vector<int> rows;
  for (int r = 0; r < static_cast<int>(runs.size()); ++r) {
    const NavigatorRun& run = runs[static_cast<std::size_t>(r)];
    if (run_ && run.record.runId != *run_) continue;
    const bool runMatchesSearch =
        search_.isEmpty() || QString::fromStdString(run.record.name).contains(search_, Qt::CaseInsensitive) ||
        QString::fromStdString(run.record.drafter.path).contains(search_, Qt::CaseInsensitive);
    ShownRun shownRun{r, {}, std::vector<int>(run.prompts.size(), -1)};
    for (int p = 0; p < static_cast<int>(run.prompts.size()); ++p) {
      const NavigatorPrompt& prompt = run.prompts[static_cast<std::size_t>(p)];
      const bool promptPass = promptPasses(run, prompt, runMatchesSearch);
      const bool byTokens = !promptPass && tokenSearch && searchOnlyPromptFilter;
      if (!promptPass && !byTokens) continue;
      ShownPrompt shownPrompt{p, {}, std::vector<int>(prompt.steps.size(), -1)};
      rows.clear();
      for (int s = 0; s < static_cast<int>(prompt.steps.size()); ++s) {
        const NavigatorStep& step = prompt.steps[static_cast<std::size_t>(s)];
        if (!stepPasses(step)) continue;
        if (byTokens && !tokenMatches_.contains(step.id)) continue;
        rows.push_back(s);
      }
      if (rows.empty() && active) continue;
      const std::vector<NavigatorStep>& steps = prompt.steps;
      if (column == NavigatorModel::AcceptanceColumn)
        rows = sortedRows(std::move(rows), sortOrder_, [&](int s) { return steps[static_cast<std::size_t>(s)].acceptLength; });
      else if (column == NavigatorModel::GarbledColumn)
        rows = sortedRows(std::move(rows), sortOrder_,
                          [&](int s) { return steps[static_cast<std::size_t>(s)].proposedGarbledSlots; });
      else if (sortOrder_ == Qt::DescendingOrder)
        std::reverse(rows.begin(), rows.end());  // steps are stored in response order
      shownPrompt.steps = rows;
      for (int i = 0; i < static_cast<int>(rows.size()); ++i) shownPrompt.stepRow[static_cast<std::size_t>(rows[static_cast<std::size_t>(i)])] = i;
      shownSteps_ += static_cast<int>(rows.size());
      shownRun.prompts.push_back(std::move(shownPrompt));
    }
    if (shownRun.prompts.empty() && active) continue;
    // Prompts in order of the sort column.
    std::vector<int> order(shownRun.prompts.size());
    for (int i = 0; i < static_cast<int>(order.size()); ++i) order[static_cast<std::size_t>(i)] = i;
    auto promptOf = [&](int i) -> const NavigatorPrompt& {
      return run.prompts[static_cast<std::size_t>(shownRun.prompts[static_cast<std::size_t>(i)].source)];
    };
    switch (column) {
      case NavigatorModel::AcceptanceColumn:
        order = sortedRows(std::move(order), sortOrder_, [&](int i) { return promptOf(i).acceptance.tau().value_or(0.0); });
        break;
      case NavigatorModel::StepsColumn:
        order = sortedRows(std::move(order), sortOrder_, [&](int i) { return promptOf(i).steps.size(); });
        break;
      case NavigatorModel::GarbledColumn:
        order = sortedRows(std::move(order), sortOrder_, [&](int i) { return promptOf(i).garbledSteps; });
        break;
      default: order = sortedRows(std::move(order), sortOrder_, [&](int i) { return promptOf(i).id; });
    }
    std::vector<ShownPrompt> prompts;
    prompts.reserve(order.size());
    for (int i : order) prompts.push_back(std::move(shownRun.prompts[static_cast<std::size_t>(i)]));
    shownRun.prompts = std::move(prompts);
    for (int i = 0; i < static_cast<int>(shownRun.prompts.size()); ++i)
      shownRun.promptRow[static_cast<std::size_t>(shownRun.prompts[static_cast<std::size_t>(i)].source)] = i;
    shown_.push_back(std::move(shownRun));
  }
  // Runs in order of the sort column.
  std::vector<int> order(shown_.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i) order[static_cast<std::size_t>(i)] = i;
  auto runOf = [&](int i) -> const NavigatorRun& { return runs[static_cast<std::size_t>(shown_[static_cast<std::size_t>(i)].source)]; };
  switch (column) {
    case NavigatorModel::AcceptanceColumn:
      order = sortedRows(std::move(order), sortOrder_,
                         [&](int i) { return model_->runTau(shown_[static_cast<std::size_t>(i)].source).value_or(0.0); });
      break;
    case NavigatorModel::StepsColumn:
      order = sortedRows(std::move(order), sortOrder_, [&](int i) { return runOf(i).acceptance.steps; });
      break;
    case NavigatorModel::GarbledColumn:
      order = sortedRows(std::move(order), sortOrder_, [&](int i) { return runOf(i).garbledSteps; });
      break;
    default: order = sortedRows(std::move(order), sortOrder_, [&](int i) { return runOf(i).record.runId; });
  }
  std::vector<ShownRun> sorted;
  sorted.reserve(order.size());
  for (int i : order) sorted.push_back(std::move(shown_[static_cast<std::size_t>(i)]));
  shown_ = std::move(sorted);
  for (int i = 0; i < static_cast<int>(shown_.size()); ++i) runRow_[static_cast<std::size_t>(shown_[static_cast<std::size_t>(i)].source)] = i;
}

NavigatorFilter::SourcePath NavigatorFilter::pathOf(const QModelIndex& proxy) const {
  const QModelIndex source = mapToSource(proxy);
  if (!source.isValid()) return {};
  const quintptr id = source.internalId();
  if (id == 0) return {source.row()};
  if (promptOfId(id) < 0) return {runOfId(id), source.row()};
  return {runOfId(id), promptOfId(id), source.row()};
}

QModelIndex NavigatorFilter::proxyIndexOf(const SourcePath& path, int column) const {
  if (path.run < 0 || path.run >= static_cast<int>(runRow_.size())) return {};
  const int runRow = runRow_[static_cast<std::size_t>(path.run)];
  if (runRow < 0) return {};
  if (path.prompt < 0) return createIndex(runRow, column, quintptr{0});
  const ShownRun& run = shown_[static_cast<std::size_t>(runRow)];
  if (path.prompt >= static_cast<int>(run.promptRow.size())) return {};
  const int promptRow = run.promptRow[static_cast<std::size_t>(path.prompt)];
  if (promptRow < 0) return {};
  if (path.step < 0) return createIndex(promptRow, column, childId(runRow, -1));
  const ShownPrompt& prompt = run.prompts[static_cast<std::size_t>(promptRow)];
  if (path.step >= static_cast<int>(prompt.stepRow.size())) return {};
  const int stepRow = prompt.stepRow[static_cast<std::size_t>(path.step)];
  return stepRow < 0 ? QModelIndex() : createIndex(stepRow, column, childId(runRow, promptRow));
}

void NavigatorFilter::relayout() {
  emit layoutAboutToBeChanged();
  const QModelIndexList before = persistentIndexList();
  std::vector<SourcePath> paths;
  paths.reserve(static_cast<std::size_t>(before.size()));
  for (const QModelIndex& index : before) paths.push_back(pathOf(index));
  build();
  QModelIndexList after;
  after.reserve(before.size());
  for (qsizetype i = 0; i < before.size(); ++i) after << proxyIndexOf(paths[static_cast<std::size_t>(i)], before[i].column());
  changePersistentIndexList(before, after);
  emit layoutChanged();
}

void NavigatorFilter::sort(int column, Qt::SortOrder order) {
  if (column == sortColumn_ && order == sortOrder_) return;
  sortColumn_ = column;
  sortOrder_ = order;
  relayout();
}

void NavigatorFilter::forwardDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight,
                                         const QList<int>& roles) {
  for (int row = topLeft.row(); row <= bottomRight.row(); ++row) {
    const QModelIndex first = mapFromSource(topLeft.siblingAtRow(row));
    if (first.isValid()) emit dataChanged(first, first.siblingAtColumn(bottomRight.column()), roles);
  }
}

QModelIndex NavigatorFilter::mapToSource(const QModelIndex& proxy) const {
  if (!model_ || !proxy.isValid()) return {};
  const quintptr id = proxy.internalId();
  if (id == 0) return model_->index(shown_[static_cast<std::size_t>(proxy.row())].source, proxy.column());
  const ShownRun& run = shown_[static_cast<std::size_t>(runOfId(id))];
  const QModelIndex sourceRun = model_->index(run.source, 0);
  if (promptOfId(id) < 0)
    return model_->index(run.prompts[static_cast<std::size_t>(proxy.row())].source, proxy.column(), sourceRun);
  const ShownPrompt& prompt = run.prompts[static_cast<std::size_t>(promptOfId(id))];
  return model_->index(prompt.steps[static_cast<std::size_t>(proxy.row())], proxy.column(),
                       model_->index(prompt.source, 0, sourceRun));
}

QModelIndex NavigatorFilter::mapFromSource(const QModelIndex& source) const {
  if (!source.isValid() || source.model() != model_) return {};
  const quintptr id = source.internalId();
  if (id == 0) return proxyIndexOf({source.row()}, source.column());
  if (promptOfId(id) < 0) return proxyIndexOf({runOfId(id), source.row()}, source.column());
  return proxyIndexOf({runOfId(id), promptOfId(id), source.row()}, source.column());
}

QModelIndex NavigatorFilter::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, quintptr{0});
  if (parent.internalId() == 0) return createIndex(row, column, childId(parent.row(), -1));
  return createIndex(row, column, childId(runOfId(parent.internalId()), parent.row()));
}

QModelIndex NavigatorFilter::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  const int runRow = runOfId(child.internalId());
  const int promptRow = promptOfId(child.internalId());
  if (promptRow < 0) return createIndex(runRow, 0, quintptr{0});
  return createIndex(promptRow, 0, childId(runRow, -1));
}

int NavigatorFilter::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(shown_.size());
  if (parent.column() != 0) return 0;
  if (parent.internalId() == 0) return static_cast<int>(shown_[static_cast<std::size_t>(parent.row())].prompts.size());
  if (promptOfId(parent.internalId()) >= 0) return 0;  // steps are leaves
  const ShownRun& run = shown_[static_cast<std::size_t>(runOfId(parent.internalId()))];
  return static_cast<int>(run.prompts[static_cast<std::size_t>(parent.row())].steps.size());
}

int NavigatorFilter::columnCount(const QModelIndex&) const { return NavigatorModel::ColumnCount; }

bool NavigatorFilter::hasChildren(const QModelIndex& parent) const { return rowCount(parent) > 0; }

}  // namespace dfi::ui
