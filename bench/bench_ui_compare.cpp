// The compare view over 10k prompts x 4 drafters (<= 500 ms): from handing it the runs' step
// summaries until its table, three plots and regression list are painted (per-run statistics
// with bootstrap intervals, the A/B pair and its block join, on the view's worker). Reference,
// measured in the same run: the statistics alone (summarizeSeries + comparePair on this
// thread, no drawing). Runs offscreen; prints one JSON line per figure.

#include <algorithm>
#include <cstdio>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

#include "bench_size.h"
#include "dfi/analysis/run_comparison.h"
#include "panels/compare_view.h"
#include "ui_timing.h"

using namespace dfi;

using dfi::bench::median;
using dfi::bench::ms;

namespace {

constexpr int kDrafters = 4, kStepsPerPrompt = 16, kBlockSize = 16;
const int kPrompts = dfi::bench::sized(10'000, 40);

// Teacher-forced-like runs: the same anchors in every run (so every block joins), acceptance
// lengths that differ by drafter and vary by prompt and step.
std::vector<analysis::ComparedSeries> makeSeries() {
  std::vector<analysis::ComparedSeries> series(kDrafters);
  for (int d = 0; d < kDrafters; ++d) {
    analysis::ComparedSeries& s = series[static_cast<std::size_t>(d)];
    s.run = d + 1;
    s.mode = session::EvaluationMode::TeacherForced;
    s.label = "drafter-" + std::to_string(d);
    s.blockSize = kBlockSize;
    s.steps.reserve(static_cast<std::size_t>(kPrompts) * kStepsPerPrompt);
    for (int p = 0; p < kPrompts; ++p)
      for (int i = 0; i < kStepsPerPrompt; ++i) {
        const auto mixed = static_cast<std::uint32_t>((p * 2654435761u) ^ (i * 40503u) ^ (d * 97u));
        const int length = 1 + static_cast<int>((mixed >> 7) % static_cast<std::uint32_t>(kBlockSize - d * 2));
        s.steps.push_back({p, 100 + i * 8, static_cast<session::StepId>(d) * kPrompts * kStepsPerPrompt + p * kStepsPerPrompt + i + 1,
                           i, length});
      }
  }
  return series;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const std::vector<analysis::ComparedSeries> series = makeSeries();
  ui::CompareView view(nullptr);
  view.resize(1600, 1000);
  view.show();
  if (!QTest::qWaitForWindowExposed(&view)) return 1;

  std::vector<double> panel, statistics;
  for (int i = 0; i < dfi::bench::sized(5, 2); ++i) {
    QSignalSpy computed(&view, &ui::CompareView::computed);
    QElapsedTimer timer;
    timer.start();
    view.setSeries(series);
    if (!computed.wait(60000)) return 1;
    view.repaint();
    panel.push_back(ms(timer));
    if (view.pair().prompts.size() != static_cast<std::size_t>(kPrompts)) return 1;

    timer.start();
    const std::vector<analysis::SeriesStatistics> stats = analysis::summarizeSeries(series);
    const analysis::PairComparison pair = analysis::comparePair(series[0], stats[0], series[1], stats[1]);
    statistics.push_back(ms(timer));
    if (pair.matchedBlocks != std::int64_t{kPrompts} * kStepsPerPrompt) return 1;
  }
  std::printf(
      "{\"bench\":\"ui_compare\",\"figure\":\"compute_and_draw_10k_prompts_4_drafters_median_ms\",\"value\":%.3f,"
      "\"unit\":\"ms\",\"target_max\":500.0,\"prompts\":%d,\"drafters\":%d,\"steps\":%d,\"resamples\":%d,"
      "\"reference\":\"the statistics alone, no drawing\",\"reference_value\":%.3f,\"ratio\":%.3f}\n",
      median(panel), kPrompts, kDrafters, kPrompts * kDrafters * kStepsPerPrompt, analysis::kBootstrapResamples,
      median(statistics), median(panel) / median(statistics));
  return 0;
}
