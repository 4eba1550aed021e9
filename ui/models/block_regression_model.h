#pragma once
// The blocks where run B accepted less than run A at the same (prompt, anchor position), the
// largest drop first: the compare view's way into single blocks (choosing a row selects B's
// block in every panel).

#include <vector>

#include <QAbstractTableModel>

#include "dfi/analysis/run_comparison.h"

namespace dfi::ui {

class BlockRegressionModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { PromptColumn, AnchorColumn, StepColumn, AcceptAColumn, AcceptBColumn, DropColumn, ColumnCount };

  explicit BlockRegressionModel(QObject* parent = nullptr);

  void setRegressions(std::vector<analysis::BlockRegression> regressions);
  const analysis::BlockRegression& regression(int row) const { return rows_[static_cast<std::size_t>(row)]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<analysis::BlockRegression> rows_;
};

}  // namespace dfi::ui
