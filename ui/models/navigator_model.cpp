#include "models/navigator_model.h"

#include <algorithm>

#include "dfi/analysis/garble.h"

#include "models/navigator_ids.h"
#include "session/session_context.h"
#include "session/session_source.h"

namespace dfi::ui {
namespace {

// An index's internal id names its parent (models/navigator_ids.h).
using navigator_ids::childId;
using navigator_ids::promptOfId;
using navigator_ids::runOfId;

QString tauText(double tau) { return QStringLiteral("%1").arg(tau, 0, 'f', 2); }

QString detectorNames(std::uint8_t flags) { return QString::fromStdString(analysis::garbleFlagNames(flags)); }

// Per detector: the steps whose proposal it flags, and those where it fires in the unreached tail only.
QString garbleCounts(const std::vector<const NavigatorStep*>& steps) {
  QStringList lines;
  for (const analysis::GarbleDetector& detector : analysis::garbleDetectors()) {
    int proposed = 0, tailOnly = 0;
    for (const NavigatorStep* step : steps) {
      proposed += (step->proposedGarble & detector.flag) != 0;
      tailOnly += !(step->proposedGarble & detector.flag) && (step->tailGarble & detector.flag);
    }
    if (proposed || tailOnly)
      lines << QObject::tr("%1: %2 in what it proposes, %3 more in the unreached tail only")
                   .arg(QString::fromUtf8(detector.name))
                   .arg(proposed)
                   .arg(tailOnly);
  }
  if (lines.isEmpty()) return QObject::tr("No garble detector fired.");
  return QObject::tr("Steps flagged, per detector (what it proposes: the accepted slots and the first mismatch):\n") +
         lines.join(QLatin1Char('\n'));
}

}  // namespace

NavigatorModel::NavigatorModel(SessionContext* context, QObject* parent) : QAbstractItemModel(parent), context_(context) {
  pool_.setMaxThreadCount(1);
}

NavigatorModel::~NavigatorModel() {
  ++generation_;
  pool_.waitForDone();  // the worker posts to this object; it must not outlive it
}

void NavigatorModel::reload() {
  const quint64 generation = ++generation_;
  ++searchGeneration_;
  appendedWhileLoading_.clear();
  beginResetModel();
  runs_.clear();
  runTaus_.clear();
  endResetModel();
  std::unique_ptr<SessionSource> source = context_->isOpen() ? context_->openSecondSource() : nullptr;
  if (!source) {  // no session, or it could not be opened again (reported)
    finishLoad(generation, {}, {});
    return;
  }
  loading_ = true;
  auto shared = std::shared_ptr<SessionSource>(std::move(source));
  pool_.start([this, generation, shared] {
    auto runs = std::make_shared<std::vector<Run>>();
    QString error;
    try {
      *runs = loadNavigatorTree(*shared);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, generation, runs, error] { finishLoad(generation, std::move(*runs), error); }, Qt::QueuedConnection);
  });
}

void NavigatorModel::searchTokenText(const QString& query) {
  const quint64 search = ++searchGeneration_;
  std::unique_ptr<SessionSource> source = context_->isOpen() && !query.isEmpty() ? context_->openSecondSource() : nullptr;
  if (!source) return;
  std::vector<std::pair<session::RunId, std::vector<session::PromptId>>> prompts;
  for (const Run& run : runs_) {
    auto& ids = prompts.emplace_back(run.record.runId, std::vector<session::PromptId>{}).second;
    for (const Prompt& prompt : run.prompts) ids.push_back(prompt.id);
  }
  auto shared = std::shared_ptr<SessionSource>(std::move(source));
  pool_.start([this, search, query, shared, prompts = std::move(prompts)] {
    // A step's text: its tokens' bytes joined, then decoded (a character may span two tokens).
    std::unordered_map<session::TokenId, std::string> bytes;  // read once per token
    // The bytes of the tokens of a response's steps not read yet, in one read per response.
    auto readTokens = [&](const std::vector<session::StepRecord>& steps) {
      std::vector<session::TokenId> unread;
      for (const session::StepRecord& step : steps)
        for (const auto* tokens : {&step.draftTokens, &step.targetTokens})
          for (session::TokenId id : *tokens)
            if (!bytes.contains(id)) unread.push_back(id);
      for (const session::TokenString& s : shared->tokenStrings(unread)) bytes.emplace(s.tokenId, s.raw);
      for (session::TokenId id : unread) bytes.emplace(id, std::string());  // no string recorded
    };
    auto decoded = [&](const std::vector<session::TokenId>& tokens) {
      std::string text;
      for (session::TokenId id : tokens) text += bytes.at(id);
      return QString::fromStdString(text);
    };
    std::vector<session::StepId> matches;
    try {
      for (const auto& [run, ids] : prompts)
        for (session::PromptId prompt : ids) {
          if (search != searchGeneration_) return;  // a newer query
          const std::vector<session::StepRecord> steps = shared->steps(run, prompt);
          readTokens(steps);
          for (const session::StepRecord& step : steps)
            if (decoded(step.draftTokens).contains(query, Qt::CaseInsensitive) ||
                decoded(step.targetTokens).contains(query, Qt::CaseInsensitive))
              matches.push_back(step.stepId);
        }
    } catch (const std::exception&) {
      return;  // the tree's load reports a bad file
    }
    QMetaObject::invokeMethod(
        this,
        [this, search, query, matches = std::move(matches)] {
          if (search == searchGeneration_) emit tokenTextMatches(query, matches);
        },
        Qt::QueuedConnection);
  });
}

void NavigatorModel::finishLoad(quint64 generation, std::vector<Run> runs, const QString& error) {
  if (generation != generation_) return;
  if (!error.isEmpty()) context_->reportError(tr("Cannot read the session"), error);
  beginResetModel();
  runs_ = std::move(runs);
  runTaus_.clear();
  endResetModel();
  loading_ = false;
  std::vector<session::StepRecord> appended;
  appended.swap(appendedWhileLoading_);
  appendSteps(appended);
  emit loaded();
}

int NavigatorModel::runRowOf(session::RunId run) const {
  for (int r = 0; r < static_cast<int>(runs_.size()); ++r)
    if (runs_[static_cast<std::size_t>(r)].record.runId == run) return r;
  return -1;
}

// The row of a prompt, inserting it (with its record, which a followed file now has) if new.
int NavigatorModel::ensurePrompt(int runRow, session::PromptId promptId) {
  Run& run = runs_[static_cast<std::size_t>(runRow)];
  if (auto it = run.promptRow.find(promptId); it != run.promptRow.end()) return it->second;
  const std::optional<session::PromptRecord> record = context_->prompt(run.record.runId, promptId);
  const int row = static_cast<int>(run.prompts.size());
  beginInsertRows(index(runRow, 0), row, row);
  run.addPrompt(promptId, record ? QString::fromStdString(record->dataset) : QString(),
                record ? QString::fromStdString(record->text) : QString());
  endInsertRows();
  return row;
}

void NavigatorModel::appendSteps(const std::vector<session::StepRecord>& steps) {
  if (loading_) {
    appendedWhileLoading_.insert(appendedWhileLoading_.end(), steps.begin(), steps.end());
    return;
  }
  for (const session::StepRecord& s : steps) {
    int r = runRowOf(s.runId);
    if (r < 0) {
      std::optional<session::RunRecord> record = context_->run(s.runId);
      if (!record) continue;
      r = static_cast<int>(runs_.size());
      beginInsertRows({}, r, r);
      runs_.push_back(Run{std::move(*record)});
      endInsertRows();
    }
    if (s.stepId <= runs_[static_cast<std::size_t>(r)].lastStep) continue;  // counted by the load
    const int p = ensurePrompt(r, s.promptId);
    Run& run = runs_[static_cast<std::size_t>(r)];
    const QModelIndex promptIndex = index(p, 0, index(r, 0));
    const int row = static_cast<int>(run.prompts[static_cast<std::size_t>(p)].steps.size());
    beginInsertRows(promptIndex, row, row);
    run.addStep(p, NavigatorStep::summarize(session::summarize(s)));
    endInsertRows();
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
  return prompt.acceptance.tau();
}

const NavigatorStep* NavigatorModel::stepAt(const QModelIndex& index) const {
  if (!index.isValid() || index.internalId() == 0) return nullptr;
  const int promptRow = promptOfId(index.internalId());
  if (promptRow < 0) return nullptr;
  const Run& run = runs_[static_cast<std::size_t>(runOfId(index.internalId()))];
  return &run.prompts[static_cast<std::size_t>(promptRow)].steps[static_cast<std::size_t>(index.row())];
}

QList<QPair<session::RunId, QString>> NavigatorModel::runNames() const {
  QList<QPair<session::RunId, QString>> names;
  for (const Run& run : runs_) names.append({run.record.runId, QString::fromStdString(run.record.name)});
  return names;
}

void NavigatorModel::setTauConvention(TauConvention convention) {
  if (convention == tauConvention_) return;
  tauConvention_ = convention;
  runTaus_.clear();
  if (!runs_.empty())
    emit dataChanged(index(0, AcceptanceColumn), index(static_cast<int>(runs_.size()) - 1, AcceptanceColumn));
  emit headerDataChanged(Qt::Horizontal, AcceptanceColumn, AcceptanceColumn);
}

std::optional<double> NavigatorModel::runTau(const Run& run) const {
  if (run.acceptance.steps == 0) return std::nullopt;
  auto& cached = runTaus_[run.record.runId];
  if (cached.first != run.acceptance.steps) {
    std::vector<analysis::ResponseAcceptance> responses;
    responses.reserve(run.prompts.size());
    for (const Prompt& prompt : run.prompts) {
      analysis::ResponseAcceptance& response = responses.emplace_back();
      response.stepAcceptLengths.reserve(prompt.steps.size());
      for (const Step& step : prompt.steps) response.stepAcceptLengths.push_back(step.acceptLength);
    }
    cached = {run.acceptance.steps, tauOf(responses, tauConvention_)};
  }
  return cached.second;
}

QModelIndex NavigatorModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, quintptr{0});
  if (parent.internalId() == 0) return createIndex(row, column, childId(parent.row(), -1));
  return createIndex(row, column, childId(runOfId(parent.internalId()), parent.row()));
}

QModelIndex NavigatorModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  const int runRow = runOfId(child.internalId());
  const int promptRow = promptOfId(child.internalId());
  if (promptRow < 0) return createIndex(runRow, 0, quintptr{0});
  return createIndex(promptRow, 0, childId(runRow, -1));
}

int NavigatorModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(runs_.size());
  if (parent.column() != 0) return 0;
  if (parent.internalId() == 0) return static_cast<int>(runs_[static_cast<std::size_t>(parent.row())].prompts.size());
  if (promptOfId(parent.internalId()) >= 0) return 0;  // steps are leaves
  const Run& run = runs_[static_cast<std::size_t>(runOfId(parent.internalId()))];
  return static_cast<int>(run.prompts[static_cast<std::size_t>(parent.row())].steps.size());
}

int NavigatorModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant NavigatorModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  if (index.internalId() == 0) return runData(runs_[static_cast<std::size_t>(index.row())], index.column(), role);
  const Run& run = runs_[static_cast<std::size_t>(runOfId(index.internalId()))];
  const int promptRow = promptOfId(index.internalId());
  if (promptRow < 0) return promptData(run, run.prompts[static_cast<std::size_t>(index.row())], index.column(), role);
  const Prompt& prompt = run.prompts[static_cast<std::size_t>(promptRow)];
  return stepData(run, prompt, prompt.steps[static_cast<std::size_t>(index.row())], index.column(), role);
}

QVariant NavigatorModel::runData(const Run& run, int column, int role) const {
  const double tau = runTau(run).value_or(0.0);
  const int steps = static_cast<int>(run.acceptance.steps);
  const QString name = run.record.name.empty() ? tr("run %1").arg(run.record.runId) : QString::fromStdString(run.record.name);
  switch (role) {
    case Qt::DisplayRole:
      if (column == NameColumn) return name;
      if (column == AcceptanceColumn) return steps ? tauText(tau) : QString();
      if (column == StepsColumn) return steps;
      if (column == GarbledColumn) return run.garbledSteps;
      return {};
    case Qt::ToolTipRole:
      if (column == GarbledColumn) {
        std::vector<const Step*> steps;
        for (const Prompt& prompt : run.prompts)
          for (const Step& step : prompt.steps) steps.push_back(&step);
        return garbleCounts(steps);
      }
      return tr("%1\ndrafter: %2\ntarget: %3\nB = %4, top-%5, %6 %7")
          .arg(name, QString::fromStdString(run.record.drafter.path), QString::fromStdString(run.record.target.path))
          .arg(run.record.blockSize).arg(run.record.topK)
          .arg(QString::fromStdString(run.record.device), QString::fromStdString(run.record.dtype));
    case KindRole: return RunNode;
    case AcceptanceRole: return tau;
    case AcceptanceFractionRole: return run.record.blockSize > 0 ? tau / run.record.blockSize : 0.0;
    case GarbledRole: return run.garbledSteps;
    case SearchTextRole: return name + QLatin1Char(' ') + QString::fromStdString(run.record.drafter.path);
    case SortRole: return column == NameColumn ? QVariant(qlonglong(run.record.runId)) : runData(run, column, AcceptanceRole);
    case RunIdRole: return QVariant::fromValue(run.record.runId);
    default: return {};
  }
}

QVariant NavigatorModel::promptData(const Run& run, const Prompt& prompt, int column, int role) const {
  const double tau = prompt.acceptance.tau().value_or(0.0);
  switch (role) {
    case Qt::DisplayRole:
      if (column == NameColumn)
        return prompt.dataset.isEmpty() ? prompt.label : tr("%1 \u00b7 %2").arg(prompt.label, prompt.dataset);
      if (column == AcceptanceColumn) return prompt.steps.empty() ? QString() : tauText(tau);
      if (column == StepsColumn) return static_cast<int>(prompt.steps.size());
      if (column == GarbledColumn) return prompt.garbledSteps;
      return {};
    case Qt::ToolTipRole:
      if (column == GarbledColumn) {
        std::vector<const Step*> steps;
        for (const Step& step : prompt.steps) steps.push_back(&step);
        return garbleCounts(steps);
      }
      return tr("prompt %1%2\n%3")
          .arg(prompt.id)
          .arg(prompt.dataset.isEmpty() ? QString() : tr(" (%1)").arg(prompt.dataset))
          .arg(prompt.text.left(600));
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
  // An imported run's first step whose acceptance leaves its reference's (dflash-eval import).
  const bool divergent = prompt.firstDivergentStep == step.index;
  switch (role) {
    case Qt::DisplayRole:
      if (column == NameColumn)
        return divergent ? tr("step %1 @ %2  \u25c0 first divergence").arg(step.index).arg(step.anchor)
                         : tr("step %1 @ %2").arg(step.index).arg(step.anchor);
      if (column == AcceptanceColumn) return step.acceptLength;
      if (column == GarbledColumn) return step.proposedGarbledSlots ? QVariant(step.proposedGarbledSlots) : QVariant();
      return {};
    case Qt::ToolTipRole:
      if (column == NameColumn && divergent)
        return tr("The first step whose acceptance differs from the reference run's on this prompt (steps before "
                  "it committed the same number of tokens)");
      if (column != GarbledColumn || (!step.proposedGarble && !step.tailGarble)) return {};
      return tr("What it proposes (accepted slots and the first mismatch): %1 slot(s), %2\nUnreached tail: %3")
          .arg(step.proposedGarbledSlots)
          .arg(step.proposedGarble ? detectorNames(step.proposedGarble) : tr("clean"))
          .arg(step.tailGarble ? detectorNames(step.tailGarble) : tr("clean"));
    case KindRole: return StepNode;
    case AcceptanceRole: return static_cast<double>(step.acceptLength);
    case AcceptanceFractionRole:
      return run.record.blockSize > 0 ? static_cast<double>(step.acceptLength) / run.record.blockSize : 0.0;
    case GarbledRole: return step.proposedGarbledSlots;
    case SearchTextRole: return tr("step %1").arg(step.index);
    case SortRole:
      if (column == NameColumn) return step.index;
      if (column == GarbledColumn) return step.proposedGarbledSlots;
      return step.acceptLength;
    case RunIdRole: return QVariant::fromValue(run.record.runId);
    case PromptIdRole: return QVariant::fromValue(prompt.id);
    case StepIdRole: return QVariant::fromValue(step.id);
    default: return {};
  }
}

QVariant NavigatorModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  // Which tau: the convention chosen in View (a prompt is one response, where they agree; a
  // step shows its own accept length).
  if (role == Qt::ToolTipRole && section == GarbledColumn)
    return tr("Runs and prompts: steps where a garble detector fired on what the drafter proposes (the accepted "
              "slots and the first mismatch; the unreached tail, which nothing used, is counted apart in the tooltip). "
              "Steps: the flagged slots of the proposal.");
  if (role == Qt::ToolTipRole && section == AcceptanceColumn)
    return tr("Runs: %1. Prompts: the mean accept length of the response. Steps: accepted drafts + 1.")
        .arg(tauConventionExplanation(tauConvention_));
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Run / prompt / step");
    case AcceptanceColumn: return tauHeader(tauConvention_);
    case StepsColumn: return tr("Steps");
    case GarbledColumn: return tr("Garbled");
    default: return {};
  }
}

}  // namespace dfi::ui
