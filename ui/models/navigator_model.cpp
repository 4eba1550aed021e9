#include "models/navigator_model.h"

#include <algorithm>

#include "context/session_context.h"

namespace dfi::ui {
namespace {

QString tauText(double tau) { return QStringLiteral("%1").arg(tau, 0, 'f', 2); }

}  // namespace

NavigatorModel::NavigatorModel(SessionContext* context, QObject* parent) : QAbstractItemModel(parent), context_(context) {}

quintptr NavigatorModel::parentId(int runRow, int promptRow) {
  return (static_cast<quintptr>(runRow + 1) << 32) | static_cast<quintptr>(promptRow + 1);
}

NavigatorModel::Step NavigatorModel::summarize(const session::StepRecord& step) {
  int garbled = 0;
  for (std::uint8_t flags : step.garbleFlags) garbled += flags != 0;
  return {step.stepId, step.stepIndex, step.anchorPosition, step.acceptLength(), garbled};
}

void NavigatorModel::reload() {
  beginResetModel();
  runs_.clear();
  lastStep_ = 0;
  if (context_->isOpen()) {
    for (session::RunRecord& record : context_->runs()) {
      Run run;
      run.record = std::move(record);
      for (const session::PromptRecord& p : context_->prompts(run.record.runId)) {
        run.promptRow.emplace(p.promptId, static_cast<int>(run.prompts.size()));
        run.prompts.push_back({p.promptId, QString::fromStdString(p.dataset), QString::fromStdString(p.text), {}, 0, 0});
      }
      runs_.push_back(std::move(run));
    }
    // One pass over each run's steps; steps of prompts the file does not list are kept too.
    for (int r = 0; r < static_cast<int>(runs_.size()); ++r) {
      context_->forEachStep(runs_[static_cast<std::size_t>(r)].record.runId, [&](const session::StepRecord& s) {
        Run& run = runs_[static_cast<std::size_t>(r)];
        Prompt& prompt = run.prompts[static_cast<std::size_t>(ensurePrompt(r, s.promptId, false))];
        const Step step = summarize(s);
        lastStep_ = std::max(lastStep_, step.id);
        prompt.steps.push_back(step);
        prompt.acceptSum += step.acceptLength;
        prompt.garbledSteps += step.garbledSlots > 0;
        run.acceptSum += step.acceptLength;
        run.stepCount += 1;
        run.garbledSteps += step.garbledSlots > 0;
      });
    }
  }
  endResetModel();
}

int NavigatorModel::runRowOf(session::RunId run) const {
  for (int r = 0; r < static_cast<int>(runs_.size()); ++r)
    if (runs_[static_cast<std::size_t>(r)].record.runId == run) return r;
  return -1;
}

int NavigatorModel::ensurePrompt(int runRow, session::PromptId promptId, bool notify) {
  Run& run = runs_[static_cast<std::size_t>(runRow)];
  if (auto it = run.promptRow.find(promptId); it != run.promptRow.end()) return it->second;
  const int row = static_cast<int>(run.prompts.size());
  Prompt prompt{promptId, {}, {}, {}, 0, 0};
  if (notify) {  // a prompt that appeared in a followed file: its record is there now
    if (std::optional<session::PromptRecord> p = context_->prompt(run.record.runId, promptId)) {
      prompt.dataset = QString::fromStdString(p->dataset);
      prompt.text = QString::fromStdString(p->text);
    }
    beginInsertRows(index(runRow, 0), row, row);
  }
  run.prompts.push_back(std::move(prompt));
  run.promptRow.emplace(promptId, row);
  if (notify) endInsertRows();
  return row;
}

void NavigatorModel::appendSteps(const std::vector<session::StepRecord>& steps) {
  for (const session::StepRecord& s : steps) {
    if (s.stepId <= lastStep_) continue;
    lastStep_ = s.stepId;
    int r = runRowOf(s.runId);
    if (r < 0) {
      std::optional<session::RunRecord> record = context_->run(s.runId);
      if (!record) continue;
      r = static_cast<int>(runs_.size());
      beginInsertRows({}, r, r);
      runs_.push_back({std::move(*record), {}, {}, 0, 0, 0});
      endInsertRows();
    }
    const int p = ensurePrompt(r, s.promptId, true);
    Run& run = runs_[static_cast<std::size_t>(r)];
    Prompt& prompt = run.prompts[static_cast<std::size_t>(p)];
    const Step step = summarize(s);
    const QModelIndex promptIndex = index(p, 0, index(r, 0));
    const int row = static_cast<int>(prompt.steps.size());
    beginInsertRows(promptIndex, row, row);
    prompt.steps.push_back(step);
    endInsertRows();
    prompt.acceptSum += step.acceptLength;
    prompt.garbledSteps += step.garbledSlots > 0;
    run.acceptSum += step.acceptLength;
    run.stepCount += 1;
    run.garbledSteps += step.garbledSlots > 0;
    emit dataChanged(index(r, 0), index(r, ColumnCount - 1));
    emit dataChanged(promptIndex, index(p, ColumnCount - 1, index(r, 0)));
  }
}

Selection NavigatorModel::selectionAt(const QModelIndex& index) const {
  if (!index.isValid()) return {};
  return {data(index, RunIdRole).value<session::RunId>(),
          index.data(KindRole).toInt() == RunNode ? -1 : data(index, PromptIdRole).value<session::PromptId>(),
          index.data(KindRole).toInt() == StepNode ? data(index, StepIdRole).value<session::StepId>() : 0};
}

QModelIndex NavigatorModel::indexOf(const Selection& selection) const {
  const int r = runRowOf(selection.run);
  if (r < 0) return {};
  const Run& run = runs_[static_cast<std::size_t>(r)];
  const auto it = run.promptRow.find(selection.prompt);
  if (it == run.promptRow.end()) return index(r, 0);
  const QModelIndex promptIndex = index(it->second, 0, index(r, 0));
  const std::vector<Step>& steps = run.prompts[static_cast<std::size_t>(it->second)].steps;
  for (int s = 0; s < static_cast<int>(steps.size()); ++s)
    if (steps[static_cast<std::size_t>(s)].id == selection.step) return index(s, 0, promptIndex);
  return promptIndex;
}

std::optional<double> NavigatorModel::promptAcceptance(session::RunId runId, session::PromptId promptId) const {
  const int r = runRowOf(runId);
  if (r < 0) return std::nullopt;
  const Run& run = runs_[static_cast<std::size_t>(r)];
  const auto it = run.promptRow.find(promptId);
  if (it == run.promptRow.end()) return std::nullopt;
  const Prompt& prompt = run.prompts[static_cast<std::size_t>(it->second)];
  if (prompt.steps.empty()) return std::nullopt;
  return prompt.acceptSum / static_cast<double>(prompt.steps.size());
}

QList<QPair<session::RunId, QString>> NavigatorModel::runNames() const {
  QList<QPair<session::RunId, QString>> names;
  for (const Run& run : runs_) names.append({run.record.runId, QString::fromStdString(run.record.name)});
  return names;
}

QModelIndex NavigatorModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, quintptr{0});
  if (parent.internalId() == 0) return createIndex(row, column, parentId(parent.row(), -1));
  return createIndex(row, column, parentId(static_cast<int>(parent.internalId() >> 32) - 1, parent.row()));
}

QModelIndex NavigatorModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  const int runRow = static_cast<int>(child.internalId() >> 32) - 1;
  const int promptRow = static_cast<int>(child.internalId() & 0xffffffffu) - 1;
  if (promptRow < 0) return createIndex(runRow, 0, quintptr{0});
  return createIndex(promptRow, 0, parentId(runRow, -1));
}

int NavigatorModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(runs_.size());
  if (parent.column() != 0) return 0;
  if (parent.internalId() == 0) return static_cast<int>(runs_[static_cast<std::size_t>(parent.row())].prompts.size());
  if ((parent.internalId() & 0xffffffffu) != 0) return 0;  // steps are leaves
  const Run& run = runs_[static_cast<std::size_t>((parent.internalId() >> 32) - 1)];
  return static_cast<int>(run.prompts[static_cast<std::size_t>(parent.row())].steps.size());
}

int NavigatorModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant NavigatorModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  if (index.internalId() == 0) return runData(runs_[static_cast<std::size_t>(index.row())], index.column(), role);
  const Run& run = runs_[static_cast<std::size_t>((index.internalId() >> 32) - 1)];
  const quintptr promptPart = index.internalId() & 0xffffffffu;
  if (promptPart == 0) return promptData(run, run.prompts[static_cast<std::size_t>(index.row())], index.column(), role);
  const Prompt& prompt = run.prompts[promptPart - 1];
  return stepData(run, prompt, prompt.steps[static_cast<std::size_t>(index.row())], index.column(), role);
}

QVariant NavigatorModel::runData(const Run& run, int column, int role) const {
  const double tau = run.stepCount ? run.acceptSum / run.stepCount : 0.0;
  const QString name = run.record.name.empty() ? tr("run %1").arg(run.record.runId) : QString::fromStdString(run.record.name);
  switch (role) {
    case Qt::DisplayRole:
      if (column == NameColumn) return name;
      if (column == AcceptanceColumn) return run.stepCount ? tauText(tau) : QString();
      if (column == StepsColumn) return run.stepCount;
      if (column == GarbledColumn) return run.garbledSteps;
      return {};
    case Qt::ToolTipRole:
      return tr("%1\ndrafter: %2\ntarget: %3\nB = %4, top-%5, %6 %7")
          .arg(name, QString::fromStdString(run.record.drafter.path), QString::fromStdString(run.record.target.path))
          .arg(run.record.blockSize).arg(run.record.topK)
          .arg(QString::fromStdString(run.record.device), QString::fromStdString(run.record.dtype));
    case KindRole: return RunNode;
    case AcceptanceRole: return tau;
    case AcceptanceFractionRole: return run.record.blockSize > 0 ? tau / run.record.blockSize : 0.0;
    case GarbledRole: return run.garbledSteps;
    case SearchTextRole: return name;
    case SortRole: return column == NameColumn ? QVariant(qlonglong(run.record.runId)) : runData(run, column, AcceptanceRole);
    case RunIdRole: return QVariant::fromValue(run.record.runId);
    default: return {};
  }
}

QVariant NavigatorModel::promptData(const Run& run, const Prompt& prompt, int column, int role) const {
  const double tau = prompt.steps.empty() ? 0.0 : prompt.acceptSum / static_cast<double>(prompt.steps.size());
  switch (role) {
    case Qt::DisplayRole:
      if (column == NameColumn)
        return prompt.dataset.isEmpty() ? tr("prompt %1").arg(prompt.id) : tr("prompt %1 (%2)").arg(prompt.id).arg(prompt.dataset);
      if (column == AcceptanceColumn) return prompt.steps.empty() ? QString() : tauText(tau);
      if (column == StepsColumn) return static_cast<int>(prompt.steps.size());
      if (column == GarbledColumn) return prompt.garbledSteps;
      return {};
    case Qt::ToolTipRole: return prompt.text.left(600);
    case KindRole: return PromptNode;
    case AcceptanceRole: return tau;
    case AcceptanceFractionRole: return run.record.blockSize > 0 ? tau / run.record.blockSize : 0.0;
    case GarbledRole: return prompt.garbledSteps;
    case SearchTextRole: return prompt.dataset + QLatin1Char(' ') + prompt.text;
    case SortRole:
      if (column == NameColumn) return qlonglong(prompt.id);
      if (column == StepsColumn) return static_cast<int>(prompt.steps.size());
      if (column == GarbledColumn) return prompt.garbledSteps;
      return tau;
    case RunIdRole: return QVariant::fromValue(run.record.runId);
    case PromptIdRole: return QVariant::fromValue(prompt.id);
    default: return {};
  }
}

QVariant NavigatorModel::stepData(const Run& run, const Prompt& prompt, const Step& step, int column, int role) const {
  switch (role) {
    case Qt::DisplayRole:
      if (column == NameColumn) return tr("step %1 @ %2").arg(step.index).arg(step.anchor);
      if (column == AcceptanceColumn) return step.acceptLength;
      if (column == GarbledColumn) return step.garbledSlots ? QVariant(step.garbledSlots) : QVariant();
      return {};
    case KindRole: return StepNode;
    case AcceptanceRole: return static_cast<double>(step.acceptLength);
    case AcceptanceFractionRole:
      return run.record.blockSize > 0 ? static_cast<double>(step.acceptLength) / run.record.blockSize : 0.0;
    case GarbledRole: return step.garbledSlots;
    case SearchTextRole: return tr("step %1").arg(step.index);
    case SortRole:
      if (column == NameColumn) return step.index;
      if (column == GarbledColumn) return step.garbledSlots;
      return step.acceptLength;
    case RunIdRole: return QVariant::fromValue(run.record.runId);
    case PromptIdRole: return QVariant::fromValue(prompt.id);
    case StepIdRole: return QVariant::fromValue(step.id);
    default: return {};
  }
}

QVariant NavigatorModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Run / prompt / step");
    case AcceptanceColumn: return tr("Acceptance (\u03c4)");
    case StepsColumn: return tr("Steps");
    case GarbledColumn: return tr("Garbled");
    default: return {};
  }
}

}  // namespace dfi::ui
