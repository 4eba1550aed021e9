#pragma once
// The compare view's three QCustomPlot pictures: acceptance-length histograms and per-slot
// acceptance curves of the chosen runs, and the per-prompt tau of run A against run B (one
// dot per prompt, red below the diagonal where B is worse). Each keeps the numbers it draws,
// for CSV export.

#include <vector>

#include <QWidget>

#include "dfi/analysis/run_comparison.h"
#include "widgets/view_export.h"

class QCustomPlot;

namespace dfi::ui {

// A FittedPlot with a bold title and its legend below the axes, two entries a row: how the
// compare view's and the positions view's plots overlay several runs.
QCustomPlot* makeLegendPlot(const QString& title, const QString& x, const QString& y);

class ComparisonPlots : public QWidget {
  Q_OBJECT
 public:
  explicit ComparisonPlots(QWidget* parent = nullptr);

  // `shown`: indices of the series to draw in the histogram and the slot curves (their
  // colours follow TauTableModel::seriesColour); a and b: the scatter's pair (-1: none).
  void draw(const std::vector<analysis::ComparedSeries>& series, const std::vector<analysis::SeriesStatistics>& stats,
            const std::vector<int>& shown, int a, int b, const analysis::PairComparison& pair);
  void clear();

  QCustomPlot* histogram() const { return histogram_; }
  QCustomPlot* slotCurves() const { return slotCurves_; }
  QCustomPlot* scatter() const { return scatter_; }

  CsvTable histogramData() const { return histogramData_; }
  CsvTable slotCurveData() const { return slotCurveData_; }
  CsvTable scatterData() const { return scatterData_; }

  // The worse-than-A colour of the scatter, for tests of the picture.
  static QColor worseColour();

 private:
  void drawHistogram(const std::vector<analysis::ComparedSeries>& series, const std::vector<analysis::SeriesStatistics>& stats,
                     const std::vector<int>& shown);
  void drawSlotCurves(const std::vector<analysis::ComparedSeries>& series, const std::vector<analysis::SeriesStatistics>& stats,
                      const std::vector<int>& shown);
  void drawScatter(const analysis::ComparedSeries* a, const analysis::ComparedSeries* b, const analysis::PairComparison& pair);

  QCustomPlot* histogram_;
  QCustomPlot* slotCurves_;
  QCustomPlot* scatter_;
  CsvTable histogramData_, slotCurveData_, scatterData_;
};

}  // namespace dfi::ui
