#include "widgets/heatmap_plot.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dfi::ui {

// One sampled picture of the visible range, built on a worker.
struct HeatmapPlot::Grid {
  quint64 generation = 0;
  int width = 0;   // samples along the columns (keys)
  int height = 0;  // samples along the rows (values)
  QCPRange keyRange;
  QCPRange valueRange;
  std::vector<double> values;  // height x width, row-major
};

namespace {

// The cells whose extent [i - 0.5, i + 0.5] intersects `range`, clipped to [0, count).
std::pair<std::int64_t, std::int64_t> visibleCells(const QCPRange& range, std::int64_t count) {
  const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(range.lower + 0.5)));
  const auto last = std::min<std::int64_t>(count - 1, static_cast<std::int64_t>(std::ceil(range.upper - 0.5)));
  return {first, last};
}

// Index of the cell sampled for sample i of n spread over `cells` cells from `first`.
std::int64_t sampledCell(std::int64_t first, std::int64_t cells, int i, int n) {
  return first + static_cast<std::int64_t>(std::floor((i + 0.5) * static_cast<double>(cells) / n));
}

// Ticks only on whole cells (a row 2.5 does not exist), labelled by the plot's owner.
class CellTicker : public QCPAxisTicker {
 public:
  std::function<QString(std::int64_t)> label;

 protected:
  double getTickStep(const QCPRange& range) override {
    return std::max(1.0, std::round(QCPAxisTicker::getTickStep(range)));
  }
  QString getTickLabel(double tick, const QLocale& locale, QChar format, int precision) override {
    if (!label) return QCPAxisTicker::getTickLabel(tick, locale, format, precision);
    return label(static_cast<std::int64_t>(std::llround(tick)));
  }
};

}  // namespace

// Draws the cells for vector exports, on the colour map's layer just above it.
class HeatmapPlot::CellLayer : public QCPLayerable {
 public:
  explicit CellLayer(HeatmapPlot* plot) : QCPLayerable(plot), plot_(plot) {}

 protected:
  void applyDefaultAntialiasingHint(QCPPainter* painter) const override { painter->setAntialiasing(false); }
  void draw(QCPPainter* painter) override { plot_->drawCells(painter); }
  QRect clipRect() const override { return plot_->axisRect()->rect(); }

 private:
  HeatmapPlot* plot_;
};

HeatmapPlot::HeatmapPlot(QWidget* parent) : FittedPlot(parent), map_(new QCPColorMap(xAxis, yAxis)) {
  pool_.setMaxThreadCount(1);  // one picture at a time; a stale one stops at its next row
  map_->setInterpolate(false);
  map_->setTightBoundary(false);  // the range names cell centres; outer cells are drawn whole
  map_->removeFromLegend();  // users of the plot put their own value legend there
  cellLayer_ = new CellLayer(this);
  cellLayer_->setVisible(false);
  yAxis->setRangeReversed(true);  // row 0 at the top, as matrices are read
  xAxis->setTicker(QSharedPointer<CellTicker>::create());
  yAxis->setTicker(QSharedPointer<CellTicker>::create());
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setNoAntialiasingOnDrag(true);
  setMouseTracking(true);
  connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] {
    clampRanges();
    requestResample();
  });
  connect(yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] {
    clampRanges();
    requestResample();
  });
  // The axis rect gets its size during layout; a new size needs a new sampling.
  connect(this, &QCustomPlot::afterLayout, this, [this] {
    if (axisRect()->rect().size() != requestedPixels_) requestResample();
  });
}

HeatmapPlot::~HeatmapPlot() {
  ++generation_;  // running workers stop at their next row
  pool_.clear();
  pool_.waitForDone();
}

void HeatmapPlot::setCells(std::int64_t rows, std::int64_t columns, CellFunction cells, bool resetView) {
  rows_ = rows;
  columns_ = columns;
  cells_ = std::move(cells);
  settingCells_ = true;  // one sampling for the new cells, not one per axis the view changes
  if (resetView) {
    showAll();
  } else {
    clampRanges();
  }
  settingCells_ = false;
  requestResample();
}

void HeatmapPlot::setVectorExport(bool on) {
  vectorExport_ = on;
  map_->setVisible(!on);
  cellLayer_->setVisible(on);
}

void HeatmapPlot::drawCells(QCPPainter* painter) const {
  if (!cells_ || rows_ == 0 || columns_ == 0) return;
  const auto [c0, c1] = visibleCells(xAxis->range(), columns_);
  const auto [r0, r1] = visibleCells(yAxis->range(), rows_);
  if (c0 > c1 || r0 > r1) return;
  const std::int64_t cols = c1 - c0 + 1, rows = r1 - r0 + 1;
  QCPColorGradient gradient = map_->gradient();
  const QCPRange range = map_->dataRange();
  // The pixel rectangle of cells [first, last] along an axis (rows run downwards).
  const auto span = [](const QCPAxis* axis, double first, double last) {
    const double a = axis->coordToPixel(first - 0.5), b = axis->coordToPixel(last + 0.5);
    return std::pair{std::min(a, b), std::max(a, b)};
  };
  if (cols * rows > kMaxVectorCells) {
    // One pixel per cell (sampled when the view holds more than kMaxExportImage a side).
    const int width = static_cast<int>(std::min<std::int64_t>(cols, kMaxExportImage));
    const int height = static_cast<int>(std::min<std::int64_t>(rows, kMaxExportImage));
    QImage image(width, height, QImage::Format_ARGB32_Premultiplied);
    std::vector<double> values(static_cast<std::size_t>(width));
    for (int y = 0; y < height; ++y) {
      const std::int64_t row = sampledCell(r0, rows, y, height);
      for (int x = 0; x < width; ++x) values[static_cast<std::size_t>(x)] = cells_(row, sampledCell(c0, cols, x, width));
      gradient.colorize(values.data(), range, reinterpret_cast<QRgb*>(image.scanLine(y)), width);
    }
    const auto [x0, x1] = span(xAxis, static_cast<double>(c0), static_cast<double>(c1));
    const auto [y0, y1] = span(yAxis, static_cast<double>(r0), static_cast<double>(r1));
    painter->drawImage(QRectF(x0, y0, x1 - x0, y1 - y0), image);
    return;
  }
  std::vector<double> values(static_cast<std::size_t>(cols));
  std::vector<QRgb> colours(static_cast<std::size_t>(cols));
  painter->setPen(Qt::NoPen);
  for (std::int64_t r = r0; r <= r1; ++r) {
    for (std::int64_t c = c0; c <= c1; ++c) values[static_cast<std::size_t>(c - c0)] = cells_(r, c);
    gradient.colorize(values.data(), range, colours.data(), static_cast<int>(cols));
    const auto [y0, y1] = span(yAxis, static_cast<double>(r), static_cast<double>(r));
    for (std::int64_t start = c0; start <= c1;) {
      std::int64_t end = start;
      const QRgb colour = colours[static_cast<std::size_t>(start - c0)];
      while (end + 1 <= c1 && colours[static_cast<std::size_t>(end + 1 - c0)] == colour) ++end;
      const auto [x0, x1] = span(xAxis, static_cast<double>(start), static_cast<double>(end));
      painter->fillRect(QRectF(x0, y0, x1 - x0, y1 - y0), QColor::fromRgba(colour));
      start = end + 1;
    }
  }
}

void HeatmapPlot::setGradient(const QCPColorGradient& gradient, const QCPRange& dataRange) {
  map_->setGradient(gradient);
  map_->setDataRange(dataRange);
  replot(rpQueuedReplot);
}

void HeatmapPlot::showAll() {
  xAxis->setRange(-0.5, std::max<double>(columns_, 1) - 0.5);
  yAxis->setRange(-0.5, std::max<double>(rows_, 1) - 0.5);
}

void HeatmapPlot::setColumnLabels(std::function<QString(std::int64_t)> label) {
  static_cast<CellTicker*>(xAxis->ticker().data())->label = std::move(label);
  replot(rpQueuedReplot);
}

void HeatmapPlot::setRowLabels(std::function<QString(std::int64_t)> label) {
  static_cast<CellTicker*>(yAxis->ticker().data())->label = std::move(label);
  replot(rpQueuedReplot);
}

// Keeps the view inside the picture: no panning into emptiness, no zooming out past it,
// and no zooming in below one cell.
void HeatmapPlot::clampRanges() {
  if (clamping_ || rows_ == 0 || columns_ == 0) return;
  clamping_ = true;
  for (auto [axis, count] : {std::pair{xAxis, columns_}, std::pair{yAxis, rows_}}) {
    const double lo = -0.5, hi = static_cast<double>(count) - 0.5;
    QCPRange r = axis->range();
    const double size = std::clamp(r.size(), std::min(1.0, hi - lo), hi - lo);
    double lower = std::clamp(r.center() - size / 2, lo, hi - size);
    axis->setRange(lower, lower + size);
  }
  clamping_ = false;
}

// The cells a grid samples: [c0, c0 + cols) x [r0, r0 + rows) at width x height samples.
struct HeatmapPlot::Window {
  std::int64_t c0, r0, cols, rows;
  int width, height;
};

std::optional<HeatmapPlot::Grid> HeatmapPlot::sample(const CellFunction& cells, const Window& w, quint64 generation,
                                                     const std::atomic<quint64>& newest) {
  Grid grid;
  grid.generation = generation;
  grid.width = w.width;
  grid.height = w.height;
  // QCPColorMapData's range runs from the centre of its first cell to the centre of its last
  // (not edge to edge): sample i stands for cells [first + i * n / w, first + (i + 1) * n / w).
  const auto centres = [](std::int64_t first, std::int64_t n, int samples) {
    const double step = static_cast<double>(n) / samples, lo = static_cast<double>(first) - 0.5;
    return QCPRange(lo + 0.5 * step, lo + (samples - 0.5) * step);
  };
  grid.keyRange = centres(w.c0, w.cols, w.width);
  grid.valueRange = centres(w.r0, w.rows, w.height);
  grid.values.resize(static_cast<std::size_t>(w.width) * static_cast<std::size_t>(w.height));
  std::vector<std::int64_t> columnOf(static_cast<std::size_t>(w.width));
  for (int x = 0; x < w.width; ++x) columnOf[static_cast<std::size_t>(x)] = sampledCell(w.c0, w.cols, x, w.width);
  for (int y = 0; y < w.height; ++y) {
    if (newest.load() != generation) return std::nullopt;  // a newer view replaced this one
    const std::int64_t row = sampledCell(w.r0, w.rows, y, w.height);
    double* out = grid.values.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(w.width);
    for (int x = 0; x < w.width; ++x) out[x] = cells(row, columnOf[static_cast<std::size_t>(x)]);
  }
  return grid;
}

void HeatmapPlot::requestResample() {
  if (clamping_ || settingCells_) return;
  const quint64 generation = ++generation_;
  pool_.clear();
  requestedPixels_ = axisRect()->rect().size();
  if (!cells_ || rows_ == 0 || columns_ == 0) {
    map_->data()->clear();
    sampledSize_ = {};
    pending_ = false;
    replot(rpQueuedReplot);
    return;
  }
  const auto [c0, c1] = visibleCells(xAxis->range(), columns_);
  const auto [r0, r1] = visibleCells(yAxis->range(), rows_);
  if (c0 > c1 || r0 > r1) {  // nothing of the picture in view (clamping prevents it; be safe)
    pending_ = false;
    return;
  }
  const std::int64_t cols = c1 - c0 + 1, rows = r1 - r0 + 1;
  const Window window{c0, r0, cols, rows,
                      static_cast<int>(std::min<std::int64_t>(cols, std::max(1, requestedPixels_.width()))),
                      static_cast<int>(std::min<std::int64_t>(rows, std::max(1, requestedPixels_.height())))};
  // A small picture (a block's mask or attention map: 16 rows) is sampled at once: the worker's
  // round trip cost a second replot, which first drew the previous grid under the new axes.
  if (std::int64_t{window.width} * window.height <= kSamplesOnGuiThread) {
    if (const std::optional<Grid> grid = sample(cells_, window, generation, generation_)) showGrid(*grid);
    return;
  }
  pending_ = true;
  pool_.start([this, generation, cells = cells_, window] {
    std::optional<Grid> grid = sample(cells, window, generation, generation_);
    if (grid)
      QMetaObject::invokeMethod(this, [this, grid = std::move(*grid)] { showGrid(grid); }, Qt::QueuedConnection);
  });
}

void HeatmapPlot::showGrid(const Grid& grid) {
  if (grid.generation != generation_.load()) return;
  QCPColorMapData* data = map_->data();
  data->setSize(grid.width, grid.height);
  data->setRange(grid.keyRange, grid.valueRange);
  for (int y = 0; y < grid.height; ++y)
    for (int x = 0; x < grid.width; ++x)
      data->setCell(x, y, grid.values[static_cast<std::size_t>(y) * static_cast<std::size_t>(grid.width) +
                                      static_cast<std::size_t>(x)]);
  sampledSize_ = QSize(grid.width, grid.height);
  pending_ = false;
  replot(rpQueuedReplot);
  emit resampled();
}

std::optional<std::pair<std::int64_t, std::int64_t>> HeatmapPlot::cellAt(const QPointF& pixel) const {
  if (!axisRect()->rect().contains(pixel.toPoint())) return std::nullopt;
  const auto column = static_cast<std::int64_t>(std::floor(xAxis->pixelToCoord(pixel.x()) + 0.5));
  const auto row = static_cast<std::int64_t>(std::floor(yAxis->pixelToCoord(pixel.y()) + 0.5));
  if (row < 0 || row >= rows_ || column < 0 || column >= columns_) return std::nullopt;
  return std::pair{row, column};
}

void HeatmapPlot::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  if (auto cell = cellAt(event->position())) {
    emit cellHovered(cell->first, cell->second);
  } else {
    emit hoverLeft();
  }
}

void HeatmapPlot::leaveEvent(QEvent* event) {
  QCustomPlot::leaveEvent(event);
  emit hoverLeft();
}

}  // namespace dfi::ui
