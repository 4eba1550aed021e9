#pragma once
// One block slot by slot: the anchor, then each draft slot with the drafter's token, the
// target's token at that position, whether it was accepted (the accepted prefix, the first
// mismatch, the rejected rest), the draft token's probability, the target token's rank in
// the draft's stored top-k, and the entropy of that top-k.
// The Garble column names the detectors that fired on each slot; its tooltip says what each
// pattern is and whether the slot counts as what the drafter proposes (accepted slots and the
// first mismatch) or lies in the unreached tail, which nothing used.
// A DDTree step has two verdicts: its draft chain (the drafter's top-1 per slot) against the
// target, and the tree's accepted path, which may leave the chain through a lower-ranked
// candidate and go further. The Verdict column is always the chain's; the Tree path column
// shows the accepted path's token per depth.

#include <functional>
#include <optional>
#include <vector>

#include <QAbstractTableModel>

class QTableView;

#include "dfi/session/records.h"

namespace dfi::ui {

class TokenTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { SlotColumn, PositionColumn, DraftColumn, TargetColumn, VerdictColumn, TreePathColumn, GarbleColumn,
                SelectorColumn, AcceptTestColumn, ConfidenceColumn, OverlapColumn, DraftProbColumn, TargetRankColumn,
                EntropyColumn, ColumnCount };
  enum class SlotState { Anchor, Accepted, FirstMismatch, NotReached };  // NotReached: after the first mismatch
  static constexpr int SlotStateRole = Qt::UserRole + 1;
  static constexpr int GarbleRole = Qt::UserRole + 2;  // uint: the slot's garble detector bits

  // Which patterns fired, one line each ("repeated-token: a run of three or more ..."), and
  // whether the slot is part of what the drafter proposes or of the unreached tail.
  static QString garbleExplanation(std::uint8_t flags, bool proposed);
  static QColor garbleColour();

  using TokenText = std::function<QString(session::TokenId)>;

  explicit TokenTableModel(QObject* parent = nullptr);

  // `topK` is the run's k; `text` gives a token's printable form (the session's display text);
  // `tree` is the step's recorded tree, if any.
  void setBlock(const session::StepRecord& step, int topK, TokenText text,
                const std::optional<session::TreeRecord>& tree = std::nullopt);
  bool hasTreePath() const { return hasTreePath_; }
  bool hasSelector() const { return hasSelector_; }        // a DFlash2 step: candidates recorded
  bool hasAcceptTest() const { return hasAcceptTest_; }    // a sampled step: p, q and u recorded
  bool hasConfidence() const { return hasConfidence_; }    // a DSpark step: the confidence head's output
  bool hasOverlap() const { return hasOverlap_; }          // a teacher-forced step: sum min(p, q) per slot
  void clear();

  static QColor stateColour(SlotState state);
  // -sum p ln p over the stored top-k only: a lower bound of the full entropy, in nats.
  static double topKEntropy(const float* probs, int k);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    int slot = 0;
    std::int64_t position = 0;
    QString draft;
    QString target;  // empty for the anchor
    SlotState state = SlotState::Anchor;
    bool drafted = true;  // false: the run holds no draft for this slot
    std::optional<float> draftProb;
    std::optional<int> targetRank;  // 1-based; nullopt when not in the stored top-k
    std::optional<double> entropy;
    QString topK;  // the top-k list for the tooltip
    bool special = false;
    QString treeToken;  // the tree's accepted path at this depth; empty past its end
    std::uint8_t garble = 0;  // dfi/analysis/garble.h bits
    QString selector, selectorTip;  // DFlash2: the chosen candidate, and every candidate
    bool overruled = false;         // the selector chose another than the drafter's argmax
    QString acceptTest, acceptTip;  // sampled: u * q against p
    std::optional<float> confidence;   // DSpark: the slot's predicted acceptance rate...
    std::optional<double> survival;    // ...and the product up to it (the prefix's predicted survival)
    std::optional<float> overlap;          // teacher-forced: sum min(p, q), the chance sampling accepts it...
    std::optional<double> overlapSurvival; // ...and the product up to it
    std::optional<session::TokenId> draftVocabId;  // a reduced draft vocabulary: the draft's own id
  };
  static void describeSelection(const session::StepRecord& step, std::size_t i, const TokenText& text, Row& row);
  static void describeAcceptTest(const session::StepRecord& step, std::size_t i, Row& row);

  std::vector<Row> rows_;
  int topK_ = 0;
  bool hasTreePath_ = false;
  bool hasSelector_ = false;
  bool hasAcceptTest_ = false;
  bool hasConfidence_ = false;
  bool hasOverlap_ = false;
};

// The chain's verdict is session::chainAcceptedCount (records.h).

// The draft tokens of a DDTree step's accepted path, root excluded: from the recorded tree, or,
// without one, the target tokens it matched. Empty for other steps.
std::vector<session::TokenId> treePathTokens(const session::StepRecord& step,
                                             const std::optional<session::TreeRecord>& tree);

// A table view of `model` as every panel shows a block: one line per slot (all 16 slots fit a
// laptop screen), columns as wide as their contents, each cell's text laid out once.
QTableView* newTokenTable(TokenTableModel* model);

}  // namespace dfi::ui
