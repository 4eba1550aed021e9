// The mask view's heatmap on large masks: the time from new cells (or a zoom) to a drawn
// picture with viewport resampling (HeatmapPlot), against pushing every cell into a plain
// QCPColorMap and drawing it, measured in the same run on the same mask. Runs offscreen.
// Target: every repaint at 8,192 context positions within 50 ms (issue 8).
// Prints one JSON line per figure.

#include <chrono>
#include <cstdio>
#include <string>

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <qcustomplot.h>

#include "bench_size.h"
#include "models/mask_layout.h"
#include "widgets/heatmap_plot.h"

using namespace dfi::ui;

namespace {

constexpr int kWidth = 1200, kHeight = 700;
// A smoke run has 16 times fewer positions and anchors: 256 times fewer training cells.
const int kShrink = dfi::bench::sized(1, 16);

double seconds(const QElapsedTimer& timer) { return static_cast<double>(timer.nsecsElapsed()) * 1e-9; }

// Naive reference: every cell into QCPColorMapData, then one replot.
double pushEveryCell(const MaskLayout& layout) {
  QCustomPlot plot;
  plot.resize(kWidth, kHeight);
  auto* map = new QCPColorMap(plot.xAxis, plot.yAxis);
  map->setInterpolate(false);
  map->setTightBoundary(true);
  map->setGradient(QCPColorGradient::gpGrayscale);
  map->setDataRange(QCPRange(0, 2));
  QElapsedTimer timer;
  timer.start();
  const auto cols = static_cast<int>(layout.columns()), rows = static_cast<int>(layout.rows());
  map->data()->setSize(cols, rows);
  map->data()->setRange(QCPRange(-0.5, cols - 0.5), QCPRange(-0.5, rows - 0.5));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) map->data()->setCell(c, r, layout.value(r, c));
  plot.rescaleAxes();
  plot.replot();
  return seconds(timer);
}

enum class Change { NewCells, Zoom, Pan };

// HeatmapPlot: new cells, a zoom to the middle tenth, or a pan by half of that tenth (a drag);
// until the picture is drawn.
double resampled(const MaskLayout& layout, Change change) {
  HeatmapPlot plot;
  plot.resize(kWidth, kHeight);
  plot.replot();  // lay out the axis rect once, as a shown widget would have
  auto shared = std::make_shared<const MaskLayout>(layout);
  auto cells = [shared](std::int64_t r, std::int64_t c) { return double(shared->value(r, c)); };
  QSignalSpy spy(&plot, &HeatmapPlot::resampled);
  const double c = double(layout.columns()) / 2, w = double(layout.columns()) / 20;
  if (change != Change::NewCells) {
    plot.setCells(layout.rows(), layout.columns(), cells, true);
    spy.wait(60000);
  }
  if (change == Change::Pan) {
    plot.xAxis->setRange(c - w, c + w);
    while (plot.isResampling()) spy.wait(60000);
  }
  QElapsedTimer timer;
  timer.start();
  switch (change) {
    case Change::NewCells: plot.setCells(layout.rows(), layout.columns(), cells, true); break;
    case Change::Zoom: plot.xAxis->setRange(c - w, c + w); break;
    case Change::Pan: plot.xAxis->setRange(c - w / 2, c + 1.5 * w); break;
  }
  while (plot.isResampling()) spy.wait(60000);
  plot.replot();
  return seconds(timer);
}

void report(const char* name, const MaskLayout& layout, double value, double reference) {
  std::printf("{\"bench\":\"ui_heatmap\",\"figure\":\"%s\",\"cells\":%lld,\"viewport\":\"%dx%d\","
              "\"seconds\":%.6f,\"target_max_seconds\":0.050,\"reference\":\"every cell into QCPColorMap + replot\","
              "\"reference_seconds\":%.6f,\"ratio\":%.4f}\n",
              name, static_cast<long long>(layout.rows() * layout.columns()), kWidth, kHeight, value, reference,
              value / reference);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
  QApplication app(argc, argv);

  MaskScene inference;
  inference.anchor = 8192 / kShrink;
  inference.spec.blockSize = 16;
  const MaskLayout inferenceMask(inference);
  const double inferenceNaive = pushEveryCell(inferenceMask);
  report("inference_8k_first_picture", inferenceMask, resampled(inferenceMask, Change::NewCells), inferenceNaive);
  report("inference_8k_pan", inferenceMask, resampled(inferenceMask, Change::Pan), inferenceNaive);

  // Training layout, 2048 positions and 128 anchors (2048 x 4096 cells): still small enough for
  // the naive reference; the 8192-position picture below has no affordable reference.
  MaskScene training;
  training.layout = MaskLayoutKind::Training;
  training.spec.blockSize = 16;
  training.sequenceLength = 2048 / kShrink;
  training.anchors = evenlySpacedAnchors(training.sequenceLength, 16, 128 / kShrink);
  const MaskLayout trainingMask(training);
  const double naive = pushEveryCell(trainingMask);
  report("training_2k_first_picture", trainingMask, resampled(trainingMask, Change::NewCells), naive);
  report("training_2k_zoom", trainingMask, resampled(trainingMask, Change::Zoom), naive);

  training.sequenceLength = 8192 / kShrink;
  training.anchors = evenlySpacedAnchors(training.sequenceLength, 16, 512 / kShrink);
  const MaskLayout bigMask(training);
  report("training_8k_first_picture_vs_2k_naive", bigMask, resampled(bigMask, Change::NewCells), naive);
  report("training_8k_zoom_vs_2k_naive", bigMask, resampled(bigMask, Change::Zoom), naive);
  report("training_8k_pan_vs_2k_naive", bigMask, resampled(bigMask, Change::Pan), naive);
  return 0;
}
