#include "models/token_table_model.h"

#include <algorithm>
#include <cmath>

#include <QColor>
#include <QFont>
#include <QHeaderView>
#include <QTableView>

#include "dfi/analysis/garble.h"
#include "widgets/one_line_delegate.h"

namespace dfi::ui {
namespace {

// Chat-template markers such as <|im_end|>: shown in italics so they are never mistaken for text.
bool isSpecial(const QString& text) {
  return text.startsWith(QLatin1String("<|")) && text.endsWith(QLatin1String("|>"));
}

QString stateName(TokenTableModel::SlotState state) {
  switch (state) {
    case TokenTableModel::SlotState::Anchor: return QObject::tr("anchor");
    case TokenTableModel::SlotState::Accepted: return QObject::tr("accepted");
    case TokenTableModel::SlotState::FirstMismatch: return QObject::tr("first mismatch");
    case TokenTableModel::SlotState::NotReached: return QObject::tr("not reached");
  }
  return {};
}

// A slot's predicted chance and, in brackets, the product of the chances up to it (the prefix's):
// DSpark's confidence, a teacher-forced slot's overlap with the target.
QString chanceText(const std::optional<float>& chance, const std::optional<double>& product) {
  return chance ? QStringLiteral("%1 (%2)").arg(static_cast<double>(*chance), 0, 'f', 3).arg(*product, 0, 'f', 3)
                : QString();
}

}  // namespace

TokenTableModel::TokenTableModel(QObject* parent) : QAbstractTableModel(parent) {}

std::vector<session::TokenId> treePathTokens(const session::StepRecord& step,
                                             const std::optional<session::TreeRecord>& tree) {
  std::vector<session::TokenId> path;
  if (step.mode != session::EvaluationMode::DDTree) return path;
  if (tree) {
    for (std::size_t d = 1; d < tree->acceptedPath.size(); ++d) {
      const auto node = static_cast<std::size_t>(tree->acceptedPath[d]);
      if (node < tree->nodeTokens.size()) path.push_back(tree->nodeTokens[node]);
    }
    return path;
  }
  const auto known = std::min(step.targetTokens.size(), static_cast<std::size_t>(std::max(step.acceptedCount, 0)));
  return {step.targetTokens.begin(), step.targetTokens.begin() + static_cast<std::ptrdiff_t>(known)};
}

QString TokenTableModel::garbleExplanation(std::uint8_t flags, bool proposed) {
  QStringList lines;
  for (const analysis::GarbleDetector& detector : analysis::garbleDetectors())
    if (flags & detector.flag)
      lines << QStringLiteral("%1: %2").arg(QString::fromUtf8(detector.name),
                                            QString::fromUtf8(detector.description));
  if (lines.isEmpty()) return {};
  lines << (proposed ? tr("Part of what the drafter proposes (the accepted slots and the first mismatch).")
                     : tr("After the first mismatch: not reached, nothing used this slot, so it does not count as what the drafter proposes."));
  return lines.join(QLatin1Char('\n'));
}

QColor TokenTableModel::garbleColour() { return QColor(0xd6, 0x27, 0x28); }

double TokenTableModel::topKEntropy(const float* probs, int k) {
  double h = 0;
  for (int i = 0; i < k; ++i)
    if (probs[i] > 0) h -= probs[i] * std::log(static_cast<double>(probs[i]));
  return h;
}

QColor TokenTableModel::stateColour(SlotState state) {
  switch (state) {
    case SlotState::Anchor: return QColor(0xd6, 0xe6, 0xf5);
    case SlotState::Accepted: return QColor(0xcf, 0xee, 0xc9);
    case SlotState::FirstMismatch: return QColor(0xf8, 0xc4, 0xb4);
    case SlotState::NotReached: return QColor(0xf0, 0xf0, 0xf0);
  }
  return {};
}

// DFlash2: the selector's choice at slot i among its candidates (index 0: the drafter's argmax).
void TokenTableModel::describeSelection(const session::StepRecord& step, std::size_t i, const TokenText& text,
                                        Row& row) {
  const std::size_t k = step.candidateIds.size() / step.draftTokens.size();
  const auto chosen = static_cast<std::size_t>(step.chosenCandidates[i]);
  row.overruled = chosen != 0;
  row.selector = chosen == 0 ? tr("argmax") : tr("#%1 over '%2'").arg(chosen + 1).arg(text(step.candidateIds[i * k]));
  row.selectorTip = tr("candidate selector at slot %1 (by logit, with its path score):").arg(row.slot);
  for (std::size_t c = 0; c < k; ++c)
    row.selectorTip += QStringLiteral("\n%1. %2  %3%4")
                           .arg(c + 1)
                           .arg(text(step.candidateIds[i * k + c]))
                           .arg(static_cast<double>(step.candidateScores[i * k + c]), 0, 'f', 3)
                           .arg(c == chosen ? tr("  <- chosen") : QString());
}

// Sampled: slot i passes while u * q < p (float32, as recorded and as the package tests it).
void TokenTableModel::describeAcceptTest(const session::StepRecord& step, std::size_t i, Row& row) {
  const float p = step.targetProbs[i], q = step.draftProbs[i], u = step.acceptUniforms[i];
  const bool passes = u * q < p;
  row.acceptTest = QStringLiteral("%1 %2 %3")
                       .arg(static_cast<double>(u * q), 0, 'g', 3)
                       .arg(passes ? QStringLiteral("<") : QStringLiteral(">="))
                       .arg(static_cast<double>(p), 0, 'g', 3);
  row.acceptTip = tr("p (target) %1, q (drafter) %2, u %3: u * q %4 p, %5")
                      .arg(static_cast<double>(p), 0, 'g', 4)
                      .arg(static_cast<double>(q), 0, 'g', 4)
                      .arg(static_cast<double>(u), 0, 'g', 4)
                      .arg(passes ? QStringLiteral("<") : QStringLiteral(">="))
                      .arg(passes ? tr("the test passes (accepted if every earlier slot passed)")
                                  : tr("rejected: the step's last token was drawn from max(0, p - q)"));
}

void TokenTableModel::clear() {
  beginResetModel();
  rows_.clear();
  hasTreePath_ = hasSelector_ = hasAcceptTest_ = false;
  endResetModel();
}

void TokenTableModel::setBlock(const session::StepRecord& step, int topK, TokenText text,
                               const std::optional<session::TreeRecord>& tree) {
  beginResetModel();
  rows_.clear();
  topK_ = topK;
  const std::vector<session::TokenId> treePath = treePathTokens(step, tree);
  hasTreePath_ = step.mode == session::EvaluationMode::DDTree;
  Row anchor;
  anchor.position = step.anchorPosition;
  anchor.draft = text(step.anchorToken);
  anchor.special = isSpecial(anchor.draft);
  rows_.push_back(anchor);
  const std::size_t slotCount = step.draftTokens.size();
  const bool haveTopK = topK > 0 && step.topKIds.size() == slotCount * static_cast<std::size_t>(topK);
  hasSelector_ = slotCount > 0 && step.chosenCandidates.size() == slotCount &&
                 step.candidateIds.size() % slotCount == 0 && step.candidateScores.size() == step.candidateIds.size();
  hasAcceptTest_ = slotCount > 0 && step.targetProbs.size() == slotCount && step.draftProbs.size() == slotCount &&
                   step.acceptUniforms.size() == slotCount;
  hasConfidence_ = slotCount > 0 && step.draftConfidence.size() == slotCount;
  hasOverlap_ = !step.slotOverlap.empty();  // the slots with a known target, from the first
  double survival = 1, overlapSurvival = 1;
  for (std::size_t i = 0; i < slotCount; ++i) {
    Row row;
    row.slot = static_cast<int>(i) + 1;
    row.position = step.anchorPosition + row.slot;
    // No draft here: another engine did not record it, or a diagnosis hypothesis stopped at its
    // block's first rejection (analysis::kNoDraft).
    row.drafted = step.draftTokens[i] != analysis::kNoDraft;
    row.draft = row.drafted ? text(step.draftTokens[i]) : QStringLiteral("\u2014");
    const session::TokenId target = i < step.targetTokens.size() ? step.targetTokens[i] : -1;
    row.target = target >= 0 ? text(target) : QString();
    row.special = isSpecial(row.draft) || isSpecial(row.target);
    const auto accepted = static_cast<std::size_t>(session::chainAcceptedCount(step));
    row.state = i < accepted ? SlotState::Accepted : i == accepted ? SlotState::FirstMismatch : SlotState::NotReached;
    if (i < treePath.size()) row.treeToken = text(treePath[i]);
    if (i < step.garbleFlags.size()) row.garble = step.garbleFlags[i];
    if (hasSelector_) describeSelection(step, i, text, row);
    if (hasAcceptTest_) describeAcceptTest(step, i, row);
    if (hasConfidence_) {
      row.confidence = step.draftConfidence[i];
      survival *= static_cast<double>(step.draftConfidence[i]);
      row.survival = survival;
    }
    if (i < step.slotOverlap.size()) {
      row.overlap = step.slotOverlap[i];
      overlapSurvival *= static_cast<double>(step.slotOverlap[i]);
      row.overlapSurvival = overlapSurvival;
    }
    if (i < step.draftVocabIds.size() && step.draftVocabIds[i] >= 0) row.draftVocabId = step.draftVocabIds[i];
    if (haveTopK) {
      const session::TokenId* ids = step.topKIds.data() + i * static_cast<std::size_t>(topK);
      const float* probs = step.topKProbs.data() + i * static_cast<std::size_t>(topK);
      row.entropy = topKEntropy(probs, topK);
      for (int k = 0; k < topK; ++k) {
        if (ids[k] == step.draftTokens[i] && !row.draftProb) row.draftProb = probs[k];
        if (ids[k] == target && !row.targetRank) row.targetRank = k + 1;
        row.topK += QStringLiteral("%1. %2  %3%4\n")
                        .arg(k + 1)
                        .arg(text(ids[k]))
                        .arg(static_cast<double>(probs[k]), 0, 'f', 3)
                        .arg(ids[k] == target ? tr("  <- target") : QString());
      }
      row.topK.chop(1);
    }
    rows_.push_back(row);
  }
  endResetModel();
}

int TokenTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TokenTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TokenTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case SlotColumn: return row.slot;
        case PositionColumn: return qlonglong(row.position);
        case DraftColumn: return row.draft;
        case TargetColumn: return row.target;
        case VerdictColumn: return stateName(row.state);
        case TreePathColumn: return row.treeToken;
        case GarbleColumn: return QString::fromStdString(analysis::garbleFlagNames(row.garble));
        case SelectorColumn: return row.selector;
        case AcceptTestColumn: return row.acceptTest;
        case ConfidenceColumn: return chanceText(row.confidence, row.survival);
        case OverlapColumn: return chanceText(row.overlap, row.overlapSurvival);
        case DraftProbColumn: return row.draftProb ? QString::number(double(*row.draftProb), 'f', 3) : QString();
        case TargetRankColumn:
          if (row.state == SlotState::Anchor || row.topK.isEmpty()) return {};
          return row.targetRank ? QString::number(*row.targetRank) : QStringLiteral("> %1").arg(topK_);
        case EntropyColumn: return row.entropy ? QString::number(*row.entropy, 'f', 3) : QString();
        default: return {};
      }
    case Qt::ToolTipRole:
      if (index.column() == GarbleColumn)
        return row.garble ? QVariant(tr("slot %1, draft '%2'\n%3")
                                         .arg(row.slot)
                                         .arg(row.draft)
                                         .arg(garbleExplanation(row.garble, row.state != SlotState::NotReached)))
                          : QVariant();
      if (index.column() == SelectorColumn && !row.selectorTip.isEmpty()) return row.selectorTip;
      if (index.column() == AcceptTestColumn && !row.acceptTip.isEmpty()) return row.acceptTip;
      if (index.column() == TreePathColumn && !row.treeToken.isEmpty())
        return tr("depth %1 of the tree's accepted path: '%2', accepted by the target%3")
            .arg(row.slot)
            .arg(row.treeToken)
            .arg(row.treeToken != row.draft ? tr(" (the chain drafted '%1' here)").arg(row.draft) : QString());
      if (index.column() == DraftColumn && !row.drafted)
        return tr("no draft recorded at slot %1: the run stops each block at its first rejected slot (a diagnosis "
                  "hypothesis), or the engine it was imported from did not record it")
            .arg(row.slot);
      if (index.column() == DraftColumn && row.draftVocabId && row.topK.isEmpty())
        return tr("draft id %1 of the drafter's reduced vocabulary").arg(*row.draftVocabId);
      if (index.column() == DraftColumn || index.column() == DraftProbColumn || index.column() == TargetRankColumn) {
        if (row.topK.isEmpty()) return {};
        const QString vocabulary =
            index.column() == DraftColumn && row.draftVocabId
                ? tr("draft id %1 of the drafter's reduced vocabulary\n").arg(*row.draftVocabId)
                : QString();
        return QVariant(vocabulary + tr("draft top-%1 at slot %2:\n%3").arg(topK_).arg(row.slot).arg(row.topK));
      }
      return {};
    case Qt::BackgroundRole:
      if (index.column() == SelectorColumn && row.overruled) return QColor(255, 236, 179);  // amber: overruled
      if (index.column() == TreePathColumn)
        return row.treeToken.isEmpty() ? stateColour(SlotState::NotReached) : stateColour(SlotState::Accepted);
      return stateColour(row.state);
    case Qt::ForegroundRole:
      // A detector that fired on the proposal is red; in the unreached tail it stays grey.
      if (index.column() == GarbleColumn && row.garble && row.state != SlotState::NotReached) return garbleColour();
      return row.state == SlotState::NotReached ? QVariant(QColor(Qt::darkGray)) : QVariant();
    case Qt::FontRole:
      if (row.special && (index.column() == DraftColumn || index.column() == TargetColumn)) {
        QFont font;
        font.setItalic(true);
        return font;
      }
      return {};
    case SlotStateRole: return static_cast<int>(row.state);
    case GarbleRole: return static_cast<uint>(row.garble);
    default: return {};
  }
}

QVariant TokenTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  static const char* names[] = {"Slot",   "Position", "Draft",    "Target",      "Verdict", "Tree path",
                                "Garble", "Selector", "u·q < p", "Confidence", "P(accept) T=1", "p(draft)",
                                "Target rank", "H top-k"};
  if (role == Qt::DisplayRole && section == VerdictColumn && hasTreePath_) return tr("Chain verdict");
  if (role == Qt::DisplayRole && section >= 0 && section < ColumnCount) return tr(names[section]);
  if (role == Qt::ToolTipRole && section == VerdictColumn)
    return hasTreePath_ ? tr("The draft chain (the drafter's top-1 per slot) against the target's tokens: what a "
                             "linear verifier would have accepted. The tree's own verdict is the Tree path column.")
                        : tr("Accepted: the leading slots equal to the target; first mismatch: where verification stopped");
  if (role == Qt::ToolTipRole && section == TreePathColumn)
    return tr("The DDTree's accepted path, one token per depth: it may leave the chain through a lower-ranked candidate "
              "and accept more than the chain");
  if (role == Qt::ToolTipRole && section == SelectorColumn)
    return tr("DFlash2's candidate selector: which of the slot's top candidates (by logit) it chose; 'argmax' where "
              "it kept the drafter's own choice, '#i over x' where it overruled it");
  if (role == Qt::ToolTipRole && section == AcceptTestColumn)
    return tr("Sampled steps: the acceptance test of each slot with its recorded uniform u, the drafter's q and the "
              "target's p of the draft; the leading slots that pass are accepted");
  if (role == Qt::ToolTipRole && section == ConfidenceColumn)
    return tr("DSpark's confidence head: the slot's predicted acceptance rate, and in brackets the product up to "
              "this slot, its predicted chance that every draft so far is accepted (what a confidence-driven verify "
              "length thresholds)");
  if (role == Qt::ToolTipRole && section == OverlapColumn)
    return tr("Teacher-forced steps: the chance that sampling at temperature 1 accepts the slot after the true text, "
              "sum min(p, q) of the target's and the drafter's distributions (speculators' accept_rate), and in "
              "brackets the product up to this slot; 1 + the sum of the products is the step's analytic accept_len");
  if (role == Qt::ToolTipRole && section == GarbleColumn)
    return tr("The garble detectors that fired on this slot (repeats, the anchor proposed again, the mask token, "
              "ids outside the vocabulary). Red: part of what the drafter proposes; grey: the unreached tail after the first mismatch.");
  if (role == Qt::ToolTipRole && section == EntropyColumn)
    return tr("Entropy (nats) over the stored top-%1 probabilities only: a lower bound of the full entropy").arg(topK_);
  if (role == Qt::ToolTipRole && section == TargetRankColumn)
    return tr("Rank of the target's token in the drafter's stored top-%1 at this slot").arg(topK_);
  return {};
}

QTableView* newTokenTable(TokenTableModel* model) {
  auto* table = new QTableView;
  table->setModel(model);
  table->setItemDelegate(new OneLineDelegate(table));
  table->verticalHeader()->hide();
  // Rows one line high (the style's default is taller), so no wrapping either.
  table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  table->setWordWrap(false);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  return table;
}

}  // namespace dfi::ui
