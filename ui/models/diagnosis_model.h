#pragma once
// The hypotheses of one diagnosis as the Diagnosis panel lists them, in readDiagnoses' order
// (measured by delta tau, largest first; then the unmeasured, then those not applicable, greyed
// with their reason). Each measured hypothesis has as children the blocks that changed most
// under it: the gains, then the losses. The bar column gives the delegate the delta tau, its
// interval and the axis every row shares (IntervalBarDelegate).

#include <vector>

#include <QAbstractItemModel>

#include "dfi/analysis/diagnosis.h"

namespace dfi::ui {

class DiagnosisModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { NameColumn, BarColumn, DeltaColumn, TauColumn, PromptsColumn, ChangeColumn, ColumnCount };
  // What a row is, for the view's clicks (StateRole).
  enum class RowState { Candidate, Measured, NotMeasured, NotApplicable, Gain, Loss };
  enum Role {
    StateRole = Qt::UserRole + 1,  // RowState as int
    EstimateRole,                  // BarColumn of measured hypotheses: delta tau, and its interval
    LowRole,
    HighRole,
    AxisLowRole,  // headerData of BarColumn: the axis every row's bar shares (zero included)
    AxisHighRole,
    VerdictRole,  // BarColumn: whether the interval may say anything (enough prompts for a verdict)
  };
  // Blocks listed per direction under a hypothesis (readDiagnoses keeps more).
  static constexpr int kBlocksShown = 10;

  explicit DiagnosisModel(QObject* parent = nullptr);

  void setDiagnosis(analysis::Diagnosis diagnosis);
  const analysis::Diagnosis& diagnosis() const { return diagnosis_; }

  // The hypothesis of a top-level row or of a block row's parent; the block of a block row.
  const analysis::HypothesisResult& hypothesis(const QModelIndex& index) const;
  bool isBlock(const QModelIndex& index) const { return index.isValid() && index.internalId() != 0; }
  const analysis::BlockRegression& block(const QModelIndex& index) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  // A block row: gains first, then losses, at most kBlocksShown of each.
  std::size_t gainsShown(const analysis::HypothesisResult& h) const;
  std::size_t lossesShown(const analysis::HypothesisResult& h) const;
  QVariant hypothesisData(const analysis::HypothesisResult& h, int column, int role) const;
  QVariant blockData(const analysis::BlockRegression& b, bool gain, int column, int role) const;

  analysis::Diagnosis diagnosis_;
  double axisLow_ = -1, axisHigh_ = 1;
};

}  // namespace dfi::ui
