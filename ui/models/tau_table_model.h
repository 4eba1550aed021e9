#pragma once
// The compare view's table: one row per compared run (and step mode) with its z-lab tau and
// 95% bootstrap interval over prompts, vLLM's pooled tau, prompts and steps. Its check boxes
// choose the runs the plots draw, and each row carries its plot colour, so it is the legend.

#include <vector>

#include <QAbstractTableModel>
#include <QColor>

#include "dfi/analysis/run_comparison.h"

namespace dfi::ui {

class TauTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { RunColumn, ModeColumn, PromptsColumn, StepsColumn, TauColumn, IntervalColumn, TauVllmColumn, ColumnCount };

  explicit TauTableModel(QObject* parent = nullptr);

  // Rows start unticked; the compare view ticks the pair it compares.
  void setRows(const std::vector<analysis::ComparedSeries>& series, const std::vector<analysis::SeriesStatistics>& stats);
  std::vector<int> shownRows() const;
  void setShownRows(const std::vector<int>& rows);  // exactly these ticked
  static QColor seriesColour(int row);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  void shownChanged();

 private:
  struct Row {
    QString label, mode, drafter;
    qint64 prompts = 0, steps = 0;
    analysis::Interval tau;
    double tauVllm = 0;
    bool shown = false;
  };
  std::vector<Row> rows_;
};

}  // namespace dfi::ui
