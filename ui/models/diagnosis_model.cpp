#include "models/diagnosis_model.h"

#include <algorithm>
#include <cmath>

#include <QApplication>
#include <QBrush>
#include <QFont>
#include <QPalette>

namespace dfi::ui {
namespace {

QString fixed(double value) { return QString::number(value, 'f', 2); }
QString signedFixed(double value) { return (value > 0 ? QStringLiteral("+") : QString()) + fixed(value); }

DiagnosisModel::RowState stateOf(const analysis::HypothesisResult& h) {
  using S = DiagnosisModel::RowState;
  if (!h.planned.applicable) return S::NotApplicable;
  if (!h.measured()) return S::NotMeasured;
  return h.candidateCause() ? S::Candidate : S::Measured;
}

// A light tint under the candidate causes' rows, dark enough to see on a light theme and a
// dark one alike.
QColor candidateTint() { return QColor(60, 170, 80, 60); }

}  // namespace

DiagnosisModel::DiagnosisModel(QObject* parent) : QAbstractItemModel(parent) {}

void DiagnosisModel::setDiagnosis(analysis::Diagnosis diagnosis) {
  beginResetModel();
  diagnosis_ = std::move(diagnosis);
  // One axis for every bar, zero included and a little room on either side.
  double low = 0, high = 0;
  for (const analysis::HypothesisResult& h : diagnosis_.hypotheses)
    if (h.measured()) {
      low = std::min({low, h.deltaTau.low, h.deltaTau.estimate});
      high = std::max({high, h.deltaTau.high, h.deltaTau.estimate});
    }
  if (high - low < 1e-9) low = -1, high = 1;  // nothing measured, or nothing moved
  const double margin = 0.05 * (high - low);
  axisLow_ = low - margin;
  axisHigh_ = high + margin;
  endResetModel();
}

std::size_t DiagnosisModel::gainsShown(const analysis::HypothesisResult& h) const {
  return std::min<std::size_t>(h.gains.size(), kBlocksShown);
}

std::size_t DiagnosisModel::lossesShown(const analysis::HypothesisResult& h) const {
  return std::min<std::size_t>(h.losses.size(), kBlocksShown);
}

const analysis::HypothesisResult& DiagnosisModel::hypothesis(const QModelIndex& index) const {
  const std::size_t row = isBlock(index) ? index.internalId() - 1 : static_cast<std::size_t>(index.row());
  return diagnosis_.hypotheses[row];
}

const analysis::BlockRegression& DiagnosisModel::block(const QModelIndex& index) const {
  const analysis::HypothesisResult& h = hypothesis(index);
  const auto row = static_cast<std::size_t>(index.row());
  return row < gainsShown(h) ? h.gains[row] : h.losses[row - gainsShown(h)];
}

QModelIndex DiagnosisModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= ColumnCount || row >= rowCount(parent)) return {};
  return createIndex(row, column, parent.isValid() ? static_cast<quintptr>(parent.row() + 1) : 0);
}

QModelIndex DiagnosisModel::parent(const QModelIndex& child) const {
  if (!isBlock(child)) return {};
  return createIndex(static_cast<int>(child.internalId() - 1), 0, quintptr(0));
}

int DiagnosisModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(diagnosis_.hypotheses.size());
  if (isBlock(parent) || parent.column() != 0) return 0;
  const analysis::HypothesisResult& h = hypothesis(parent);
  return static_cast<int>(gainsShown(h) + lossesShown(h));
}

int DiagnosisModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant DiagnosisModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  if (isBlock(index)) {
    const analysis::HypothesisResult& h = hypothesis(index);
    const bool gain = static_cast<std::size_t>(index.row()) < gainsShown(h);
    return blockData(block(index), gain, index.column(), role);
  }
  return hypothesisData(hypothesis(index), index.column(), role);
}

QVariant DiagnosisModel::hypothesisData(const analysis::HypothesisResult& h, int column, int role) const {
  const RowState state = stateOf(h);
  if (role == StateRole) return static_cast<int>(state);
  if (role == Qt::ForegroundRole && (state == RowState::NotApplicable || state == RowState::NotMeasured))
    return QApplication::palette().brush(QPalette::Disabled, QPalette::Text);
  if (role == Qt::BackgroundRole && state == RowState::Candidate) return QBrush(candidateTint());
  if (role == Qt::FontRole && state == RowState::Candidate) {
    QFont font;
    font.setBold(true);
    return font;
  }
  if (role == Qt::TextAlignmentRole && column != NameColumn && column != ChangeColumn)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (column == BarColumn && h.measured()) {
    if (role == EstimateRole) return h.deltaTau.estimate;
    if (role == LowRole) return h.deltaTau.low;
    if (role == HighRole) return h.deltaTau.high;
    if (role == VerdictRole) return analysis::verdictPossible(h.pairedPrompts);
  }
  if (role == Qt::ToolTipRole) {
    switch (state) {
      case RowState::Candidate:
        return tr("Candidate cause: the drafter does better under this variant beyond noise (the whole 95% "
                  "interval is above zero), so it was probably trained this way. Click to compare the baseline "
                  "with this run block by block; expand for the blocks that changed most.");
      case RowState::Measured:
        return tr("%1\nClick to compare the baseline with this run block by block; expand for the blocks that "
                  "changed most.")
            .arg(QString::fromStdString(h.planned.change));
      case RowState::NotMeasured:
        return tr("Not measured: no prompt of it finished (the diagnosis was cancelled before, or is still running).");
      case RowState::NotApplicable:
        return tr("Not applicable to this drafter and target: %1").arg(QString::fromStdString(h.planned.reason));
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (column) {
    case NameColumn: return QString::fromStdString(h.planned.name);
    case DeltaColumn:
      return h.measured() ? QStringLiteral("%1  [%2, %3]").arg(signedFixed(h.deltaTau.estimate),
                                                               signedFixed(h.deltaTau.low), signedFixed(h.deltaTau.high))
                          : QString();
    case TauColumn: return h.measured() ? fixed(h.tau.estimate) : QString();
    case PromptsColumn: return h.measured() ? QVariant(qlonglong(h.pairedPrompts)) : QVariant(QString());
    case ChangeColumn:
      switch (state) {
        case RowState::NotApplicable:
          return tr("not applicable: %1").arg(QString::fromStdString(h.planned.reason));
        case RowState::NotMeasured: return tr("not measured: no prompt of it finished (cancelled, or still running)");
        default: return QString::fromStdString(h.planned.change);
      }
    default: return {};
  }
}

QVariant DiagnosisModel::blockData(const analysis::BlockRegression& b, bool gain, int column, int role) const {
  if (role == StateRole) return static_cast<int>(gain ? RowState::Gain : RowState::Loss);
  if (role == Qt::TextAlignmentRole && column != NameColumn && column != ChangeColumn)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole)
    return tr("Prompt %1, step %2 (anchor at position %3): the baseline's block (step id %4) accepted %5, the "
              "hypothesis's (step id %6) %7. Click to select it in the other panels.")
        .arg(b.prompt).arg(b.stepIndexB).arg(b.anchor).arg(b.stepA).arg(b.acceptA).arg(b.stepB).arg(b.acceptB);
  if (role != Qt::DisplayRole) return {};
  switch (column) {
    case NameColumn:
      return (gain ? tr("gain: prompt %1, step %2") : tr("loss: prompt %1, step %2")).arg(b.prompt).arg(b.stepIndexB);
    case ChangeColumn: {
      const int change = b.acceptB - b.acceptA;
      return tr("%1: acceptance length %2 \u2192 %3, anchor at %4")
          .arg((change > 0 ? QStringLiteral("+") : QString()) + QString::number(change))
          .arg(b.acceptA)
          .arg(b.acceptB)
          .arg(b.anchor);
    }
    default: return {};
  }
}

QVariant DiagnosisModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (section == BarColumn && role == AxisLowRole) return axisLow_;
  if (section == BarColumn && role == AxisHighRole) return axisHigh_;
  if (role == Qt::ToolTipRole && section == BarColumn)
    return tr("The paired difference of tau (z-lab) against the baseline over the same prompts: the bar is the "
              "estimate, the whiskers its 95% bootstrap interval, the vertical line zero. Green: the interval "
              "lies above zero (a candidate cause); red: below zero.");
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Hypothesis");
    case BarColumn: return tr("\u0394\u03c4, axis %1 \u2026 %2").arg(signedFixed(axisLow_), signedFixed(axisHigh_));
    case DeltaColumn: return tr("\u0394\u03c4 (z-lab) [95%]");
    case TauColumn: return tr("\u03c4");
    case PromptsColumn: return tr("Prompts");
    case ChangeColumn: return tr("What it changes");
    default: return {};
  }
}

}  // namespace dfi::ui
