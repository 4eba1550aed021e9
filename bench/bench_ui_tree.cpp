// The tree view at DDTree budget 256 (<= 50 ms): moving the budget slider of a B = 16, top-8
// block until the panel is painted again (the tree rebuilt from the stored top-k, laid out,
// its token texts looked up, drawn). Reference, measured in the same run: building the same
// tree with analysis::buildDDTree alone. Runs offscreen; prints one JSON line per figure.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include "bench_size.h"
#include "session/file_session_source.h"
#include "session/session_context.h"
#include "dfi/analysis/ddtree.h"
#include "dfi/session/writer.h"
#include "widgets/tree_canvas.h"
#include "panels/tree_view.h"
#include "ui_timing.h"

using namespace dfi;

using dfi::bench::median;
using dfi::bench::ms;

namespace {

constexpr int kBlockSize = 16, kTopK = 8, kBudget = 256;

// A drafter's block: confident early slots, flatter ones later, probabilities falling by rank.
session::StepRecord block() {
  session::StepRecord step;
  step.runId = 1;
  step.anchorToken = 1;
  step.maskVariant = "reference";
  for (int s = 0; s < kBlockSize - 1; ++s) {
    const double sharpness = 2.0 - 0.1 * s;
    double total = 0;
    std::vector<double> weights;
    for (int r = 0; r < kTopK; ++r) total += weights.emplace_back(std::exp(-sharpness * r));
    for (int r = 0; r < kTopK; ++r) {
      step.topKIds.push_back(100 + s * kTopK + r);
      step.topKProbs.push_back(static_cast<float>(0.9 * weights[static_cast<std::size_t>(r)] / total));
    }
    step.draftTokens.push_back(100 + s * kTopK);
    step.targetTokens.push_back(100 + s * kTopK + (s == 9 ? 1 : 0));
  }
  step.acceptedCount = 9;
  step.bonusToken = step.targetTokens[9];
  return step;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("tree.dfi"));
  session::StepRecord step = block();
  {
    session::Writer writer(path.toStdString(), {.mode = session::OpenMode::Overwrite});
    std::vector<session::TokenString> strings;
    for (session::TokenId id = 0; id < 100 + kBlockSize * kTopK; ++id)
      strings.push_back({id, "tok" + std::to_string(id), "\u2423tok" + std::to_string(id)});
    writer.addTokenStrings(strings);
    session::RunRecord run;
    run.name = "bench";
    run.blockSize = kBlockSize;
    run.topK = kTopK;
    writer.addRun(run);
    writer.addPrompt({.runId = 1, .promptId = 0});
    step.stepId = writer.addStep(step);
    writer.close();
  }
  ui::SessionContext context([](const QString& p) { return std::make_unique<ui::FileSessionSource>(p.toStdString()); });
  ui::TreeView view(&context);
  view.resize(1200, 800);
  view.show();
  if (!QTest::qWaitForWindowExposed(&view)) return 1;
  context.open(path);
  context.select({1, 0, step.stepId});

  std::vector<analysis::SlotTopK> topK(kBlockSize - 1);
  for (std::size_t s = 0; s < topK.size(); ++s)
    for (std::size_t r = 0; r < kTopK; ++r) {
      topK[s].tokens.push_back(step.topKIds[s * kTopK + r]);
      topK[s].logProbs.push_back(std::log(step.topKProbs[s * kTopK + r]));
    }

  std::vector<double> panel, compute;
  for (int i = 0; i < dfi::bench::sized(60, 3); ++i) {  // a smoke run: the same tree, fewer rounds
    view.setBudget(kBudget - 1);  // so that the measured change is a real rebuild
    QElapsedTimer timer;
    timer.start();
    view.setBudget(kBudget);
    view.repaint();
    panel.push_back(ms(timer));
    if (view.canvas()->tree().nodes.size() != kBudget + 1) return 1;
    timer.start();
    const analysis::DDTree tree = analysis::buildDDTree(topK, kBudget, step.anchorToken);
    compute.push_back(ms(timer));
    if (tree.size() != kBudget + 1) return 1;
  }
  std::printf(
      "{\"bench\":\"ui_tree\",\"figure\":\"budget_256_rebuild_and_paint_median_ms\",\"value\":%.3f,\"unit\":\"ms\","
      "\"target_max\":50.0,\"nodes\":%d,\"reference\":\"analysis::buildDDTree alone\",\"reference_value\":%.3f,"
      "\"ratio\":%.2f}\n",
      median(panel), kBudget, median(compute), median(panel) / median(compute));
  return 0;
}
