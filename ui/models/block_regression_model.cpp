#include "models/block_regression_model.h"

namespace dfi::ui {

BlockRegressionModel::BlockRegressionModel(QObject* parent) : QAbstractTableModel(parent) {}

void BlockRegressionModel::setRegressions(std::vector<analysis::BlockRegression> regressions) {
  beginResetModel();
  rows_ = std::move(regressions);
  endResetModel();
}

int BlockRegressionModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int BlockRegressionModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant BlockRegressionModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const analysis::BlockRegression& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole)
    return tr("prompt %1, anchor at position %2: A accepted %3 (its step id %4), B %5 (step %6, step index %7)")
        .arg(r.prompt).arg(r.anchor).arg(r.acceptA).arg(r.stepA).arg(r.acceptB).arg(r.stepB).arg(r.stepIndexB);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case PromptColumn: return qlonglong(r.prompt);
    case AnchorColumn: return qlonglong(r.anchor);
    case StepColumn: return r.stepIndexB;
    case AcceptAColumn: return r.acceptA;
    case AcceptBColumn: return r.acceptB;
    case DropColumn: return r.acceptA - r.acceptB;
    default: return {};
  }
}

QVariant BlockRegressionModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case PromptColumn: return tr("Prompt");
    case AnchorColumn: return tr("Anchor");
    case StepColumn: return tr("Step (B)");
    case AcceptAColumn: return tr("Accept A");
    case AcceptBColumn: return tr("Accept B");
    case DropColumn: return tr("Drop");
    default: return {};
  }
}

}  // namespace dfi::ui
