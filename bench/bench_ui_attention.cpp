// The attention view on a long context: a block whose drafter attention is 4 layers x 32 heads
// x 16 query slots x (2048 + 16) keys (17 MB of probabilities, written with session::Writer
// as the engine stores them), from SessionContext::select until the view has read the layers,
// reduced the heads, drawn its thumbnail grid and resampled the map to the viewport, then
// painted; median over selections. Reference, measured in the same run: reading the same
// tensors with session::Reader::readTensor alone. Runs offscreen; prints one JSON line.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include "bench_size.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "panels/attention_view.h"
#include "session/file_session_source.h"
#include "session/session_context.h"
#include "widgets/heatmap_plot.h"
#include "ui_timing.h"

using namespace dfi;

using dfi::bench::median;
using dfi::bench::ms;

namespace {

constexpr int kLayers = 4, kBlock = 16;
// A smoke run: 4 times fewer heads and 64 times fewer keys, 258 times fewer bytes.
const int kHeads = bench::sized(32, 8);
const std::int64_t kContext = bench::sized<std::int64_t>(2048, 16), kKeys = kContext + kBlock;

struct LongContext {
  session::RunId run = 0;
  session::StepId step = 0;
  std::vector<session::TensorId> tensors;
};

// One block with every drafter layer's attention probabilities [heads, block, keys] (GQA: 4
// heads per kv head).
LongContext write(const std::string& path) {
  session::Writer writer(path, {.mode = session::OpenMode::Overwrite});
  session::RunRecord run;
  run.name = "long";
  run.blockSize = kBlock;
  run.drafter.configJson = "{\"num_attention_heads\": " + std::to_string(kHeads) +
                           ", \"num_key_value_heads\": " + std::to_string(kHeads / 4) + "}";
  LongContext written{.run = writer.addRun(run)};
  session::StepRecord step;
  step.runId = written.run;
  step.anchorPosition = kContext;
  step.draftTokens.assign(kBlock - 1, 1);
  step.targetTokens.assign(kBlock - 1, 1);
  step.maskVariant = "reference";
  written.step = writer.addStep(step);
  std::vector<float> probs(static_cast<std::size_t>(kHeads * kBlock * kKeys));
  for (std::size_t i = 0; i < probs.size(); ++i) probs[i] = static_cast<float>((i * 2654435761u) % 1000) / 1e6f;
  for (int l = 0; l < kLayers; ++l) {
    session::TensorRecord t{.info = {.runId = written.run, .stepId = written.step,
                                     .name = "drafter.layers." + std::to_string(l) + ".attn.probs", .layer = l,
                                     .dtype = session::TensorDType::F32, .shape = {kHeads, kBlock, kKeys},
                                     .layout = "head,query,key"}};
    t.data.resize(probs.size() * sizeof(float));
    std::memcpy(t.data.data(), probs.data(), t.data.size());
    written.tensors.push_back(writer.addTensor(t));
  }
  writer.close();
  return written;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("long.dfi"));
  const LongContext block = write(path.toStdString());

  ui::SessionContext context([](const QString& p) { return std::make_unique<ui::FileSessionSource>(p.toStdString()); });
  if (!context.open(path)) throw std::runtime_error("cannot open " + path.toStdString());
  ui::AttentionView view(&context);
  view.resize(1300, 900);
  view.show();
  if (!QTest::qWaitForWindowExposed(&view)) throw std::runtime_error("the view was never exposed");
  session::Reader reader(path.toStdString());

  std::vector<double> panel, reads;
  std::size_t bytes = 0;
  for (int i = 0; i < bench::sized(10, 2); ++i) {
    context.select({});  // so that selecting the block reads it again
    QElapsedTimer timer;
    timer.start();
    context.select({block.run, 0, block.step});
    while (view.plot()->isResampling()) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    view.repaint();
    panel.push_back(ms(timer));
    const int sampled = view.plot()->sampledSize().width();  // never more columns than keys or pixels
    if (view.probes().attention.size() != kLayers || sampled <= 0 ||
        sampled > std::min<std::int64_t>(kKeys, view.plot()->width()))
      throw std::runtime_error("the view shows " + std::to_string(view.probes().attention.size()) +
                               " layers, its map " + std::to_string(sampled) + " columns");

    timer.start();
    bytes = 0;
    for (const session::TensorId id : block.tensors) bytes += reader.readTensor(id).data.size();
    reads.push_back(ms(timer));
  }
  std::printf(
      "{\"bench\":\"ui_attention\",\"figure\":\"select_long_context_block_median_ms\",\"value\":%.3f,\"unit\":\"ms\","
      "\"layers\":%d,\"heads\":%d,\"query_slots\":%d,\"keys\":%lld,\"probability_bytes\":%zu,"
      "\"reference\":\"session::Reader::readTensor of the same tensors\",\"reference_value\":%.3f,\"ratio\":%.3f}\n",
      median(panel), kLayers, kHeads, kBlock, static_cast<long long>(kKeys), bytes, median(reads),
      median(panel) / median(reads));
  return 0;
}
