#include "models/tau_table_model.h"

#include <algorithm>
#include <cmath>

#include "models/tau_convention.h"

#include "dfi/session/record_fields.h"

namespace dfi::ui {

TauTableModel::TauTableModel(QObject* parent) : QAbstractTableModel(parent) {}

QColor TauTableModel::seriesColour(int row) {
  // Tableau 10: distinct on screen and in print, and kind to the common colour blindnesses.
  static const QColor colours[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59),
                                   QColor(0x76, 0xb7, 0xb2), QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48),
                                   QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
                                   QColor(0xba, 0xb0, 0xac)};
  if (row >= 0 && row < 10) return colours[row];
  // Past ten runs (a demo session has fifteen) a colour of its own, never the tenth-earlier
  // run's: hues a golden angle apart, darker than the palette so they differ from it too.
  return QColor::fromHsv(static_cast<int>(std::fmod(20.0 + 137.508 * (row - 10), 360.0)), 200, 150);
}

void TauTableModel::setRows(const std::vector<analysis::ComparedSeries>& series,
                            const std::vector<analysis::SeriesStatistics>& stats) {
  beginResetModel();
  rows_.clear();
  for (std::size_t i = 0; i < series.size() && i < stats.size(); ++i) {
    Row row;
    row.label = QString::fromStdString(series[i].label);
    row.mode = QString::fromUtf8(enumName(series[i].mode).data());
    row.drafter = QString::fromStdString(series[i].drafter);
    row.prompts = static_cast<qint64>(stats[i].prompts.size());
    row.steps = stats[i].steps;
    row.tau = stats[i].tau;
    row.tauVllm = stats[i].tauVllm;
    rows_.push_back(std::move(row));
  }
  endResetModel();
}

void TauTableModel::setShownRows(const std::vector<int>& shown) {
  for (std::size_t r = 0; r < rows_.size(); ++r)
    rows_[r].shown = std::find(shown.begin(), shown.end(), static_cast<int>(r)) != shown.end();
  if (!rows_.empty()) emit dataChanged(index(0, RunColumn), index(rowCount() - 1, RunColumn), {Qt::CheckStateRole});
  emit shownChanged();
}

std::vector<int> TauTableModel::shownRows() const {
  std::vector<int> out;
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r)
    if (rows_[static_cast<std::size_t>(r)].shown) out.push_back(r);
  return out;
}

int TauTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }

int TauTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TauTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  if (index.column() == RunColumn) {
    if (role == Qt::CheckStateRole) return row.shown ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::DecorationRole) return seriesColour(index.row());
    if (role == Qt::ToolTipRole) return tr("%1\ndrafter: %2\ntick to draw it in the plots").arg(row.label, row.drafter);
  }
  if (role == Qt::TextAlignmentRole && index.column() >= PromptsColumn)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case RunColumn: return row.label;
    case ModeColumn: return row.mode;
    case PromptsColumn: return row.prompts;
    case StepsColumn: return row.steps;
    case TauColumn: return QString::number(row.tau.estimate, 'f', 3);
    case IntervalColumn: return QStringLiteral("[%1, %2]").arg(row.tau.low, 0, 'f', 3).arg(row.tau.high, 0, 'f', 3);
    case TauVllmColumn: return QString::number(row.tauVllm, 'f', 3);
    default: return {};
  }
}

bool TauTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid) || index.column() != RunColumn || role != Qt::CheckStateRole)
    return false;
  rows_[static_cast<std::size_t>(index.row())].shown = value.toInt() == Qt::Checked;
  emit dataChanged(index, index, {Qt::CheckStateRole});
  emit shownChanged();
  return true;
}

Qt::ItemFlags TauTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.isValid() && index.column() == RunColumn) f |= Qt::ItemIsUserCheckable;
  return f;
}

QVariant TauTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    if (section == TauColumn) return tr("z-lab \u03c4: mean over prompts of each response's mean acceptance length");
    if (section == IntervalColumn) return tr("95% percentile bootstrap over prompts (%1 resamples)").arg(analysis::kBootstrapResamples);
    if (section == TauVllmColumn) return tr("vLLM's \u03c4: 1 + accepted drafts / drafts, pooled over every step");
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case RunColumn: return tr("Run");
    case ModeColumn: return tr("Mode");
    case PromptsColumn: return tr("Prompts");
    case StepsColumn: return tr("Steps");
    case TauColumn: return tauHeader(TauConvention::Reference);
    case IntervalColumn: return tr("95% CI");
    case TauVllmColumn: return tr("\u03c4 (vLLM)");
    default: return {};
  }
}

}  // namespace dfi::ui
