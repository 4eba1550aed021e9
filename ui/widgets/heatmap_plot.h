#pragma once
// A QCustomPlot heatmap of a rows x columns cell function that can be far larger than the
// screen (8k x 16k masks). It never pushes more cells than pixels: on every zoom, pan or
// resize it samples the function at pixel resolution over the visible range (on a worker
// thread unless the picture is small), and shows the newest result only (a generation counter
// drops stale ones).
// Rows run top to bottom; cell (r, c) is centred on axis coordinates (c, r).

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>

#include <QThreadPool>
#include <qcustomplot.h>

#include "widgets/fitted_plot.h"

namespace dfi::ui {

class HeatmapPlot : public FittedPlot {
  Q_OBJECT
 public:
  // Called from worker threads: must be pure (capture an immutable copy of its data).
  using CellFunction = std::function<double(std::int64_t row, std::int64_t column)>;

  explicit HeatmapPlot(QWidget* parent = nullptr);
  ~HeatmapPlot() override;

  // Replaces the picture; resetView shows all of it, otherwise the visible range is kept
  // (clamped to the new extent).
  void setCells(std::int64_t rows, std::int64_t columns, CellFunction cells, bool resetView);
  void setGradient(const QCPColorGradient& gradient, const QCPRange& dataRange);
  void showAll();
  // Tick labels of the column axis (default: the column number); ticks are always on cells.
  void setColumnLabels(std::function<QString(std::int64_t column)> label);
  // Tick labels of the row axis (default: the row number).
  void setRowLabels(std::function<QString(std::int64_t row)> label);

  std::int64_t rows() const { return rows_; }
  std::int64_t columns() const { return columns_; }
  // The cell under a widget pixel, if any.
  std::optional<std::pair<std::int64_t, std::int64_t>> cellAt(const QPointF& pixel) const;
  // Size of the grid on screen now (columns x rows sampled), for tests and the status line.
  QSize sampledSize() const { return sampledSize_; }
  bool isResampling() const { return pending_; }

  // Vector exports (SVG, PDF) while on: the cells in view are drawn from the cell function at
  // full resolution, as rectangles (runs of one colour merged) up to kMaxVectorCells cells in
  // view, beyond that as one image of one pixel per cell (at most kMaxExportImage a side),
  // instead of the on-screen sampling, which a vector painter would store at screen size.
  void setVectorExport(bool on);
  bool isVectorExport() const { return vectorExport_; }
  static constexpr std::int64_t kMaxVectorCells = 250000;
  static constexpr int kMaxExportImage = 4096;

 signals:
  void resampled();  // a new grid is on screen
  void cellHovered(qint64 row, qint64 column);
  void hoverLeft();

 protected:
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  struct Grid;
  struct Window;
  // Pictures of at most this many samples are sampled on the GUI thread (well under 1 ms).
  static constexpr std::int64_t kSamplesOnGuiThread = 1 << 15;
  static std::optional<Grid> sample(const CellFunction& cells, const Window& window, quint64 generation,
                                    const std::atomic<quint64>& newest);
  void clampRanges();
  void requestResample();
  void showGrid(const Grid& grid);
  class CellLayer;
  void drawCells(QCPPainter* painter) const;

  QCPColorMap* map_;
  QThreadPool pool_;
  std::atomic<quint64> generation_{0};
  CellFunction cells_;
  std::int64_t rows_ = 0;
  std::int64_t columns_ = 0;
  QSize sampledSize_;
  QSize requestedPixels_;
  bool pending_ = false;
  bool clamping_ = false;
  bool settingCells_ = false;
  bool vectorExport_ = false;
  CellLayer* cellLayer_ = nullptr;
};

}  // namespace dfi::ui
