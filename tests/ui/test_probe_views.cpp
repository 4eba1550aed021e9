// The attention and statistics views (issue 9, items 1 and 2) on a session that holds the
// drafter's attention and hidden-state statistics of a block (written with session::Writer):
// every layer and head with token labels, the layer x head grid with GQA groups, mean and max
// over heads; per-position curves, histogram, NaN markers, another run overlaid with its
// difference, an imported dump overlaid through tap_names pairing; CSV export; the inspect
// request a block without attention would send; headless rendering of both views.

#include <cmath>

#include <QComboBox>
#include <QElapsedTimer>
#include <QImage>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "session/file_session_source.h"
#include "engine/inspect_client.h"
#include "session/session_context.h"
#include "dfi/analysis/hidden_statistics.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "gui_test_support.h"
#include "models/block_probes.h"
#include "models/dump_statistics.h"
#include "probe_fixture.h"
#include "widgets/attention_grid.h"
#include "widgets/heatmap_plot.h"
#include "panels/attention_view.h"
#include "windows/main_window.h"
#include "windows/render.h"
#include "windows/run_dialog.h"
#include "panels/stats_view.h"

using namespace dfi;
using namespace dfi::ui;

class TestProbeViews : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;
  test::ProbeFixture fixture_;
  std::unique_ptr<SessionContext> context_;

  void waitForResample(HeatmapPlot* plot) {
    QTRY_VERIFY_WITH_TIMEOUT(!plot->isResampling() && plot->sampledSize().width() > 0, 5000);
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("probes.dfi"));
    fixture_ = test::writeProbeFixtureFile(path_.toStdString());
    context_ = test::openSession(path_);
    QVERIFY(context_);
  }

  // Few wide cells: each is drawn exactly over [c - 0.5, c + 0.5] (the colour map's range was
  // given edge to edge, which QCPColorMapData takes as cell centres: cells came out 12/11 wide
  // and shifted, the context | block line fell inside a cell).
  void heatmapCellsSitOnTheirCoordinates() {
    HeatmapPlot plot;
    plot.resize(900, 300);
    plot.show();
    QCPColorGradient gradient(QCPColorGradient::gpGrayscale);
    plot.setGradient(gradient, QCPRange(0, 1));
    plot.setCells(4, 12, [](std::int64_t, std::int64_t c) { return c == 1 ? 1.0 : 0.0; }, true);
    waitForResample(&plot);
    plot.replot();
    const QImage image = plot.grab().toImage();
    const int y = static_cast<int>(plot.yAxis->coordToPixel(1.0));
    auto brightAt = [&](double column) {
      return qGray(image.pixel(static_cast<int>(plot.xAxis->coordToPixel(column)), y)) > 128;
    };
    QVERIFY(!brightAt(0.35));
    QVERIFY(brightAt(0.65));
    QVERIFY(brightAt(1.35));
    QVERIFY(!brightAt(1.65));
  }

  void groupsStatisticsByTensor() {
    const BlockProbes probes = loadBlockProbes(*context_, fixture_.gqaRun, fixture_.gqaStep);
    QCOMPARE(probes.attention.size(), std::size_t{2});
    QCOMPARE(probes.attention[1].heads, std::int64_t{4});
    QCOMPARE(probes.attention[1].keys, fixture_.anchor + fixture_.blockSize);
    QCOMPARE(probes.statistics.size(), std::size_t{6});
    // Taps by layer, then fc, hidden_norm, drafter layers.
    QCOMPARE(probes.statistics[0].label(), QStringLiteral("target tap (layer 1)"));
    QCOMPARE(probes.statistics[2].label(), QStringLiteral("drafter fc"));
    QCOMPARE(probes.statistics[3].label(), QStringLiteral("drafter hidden_norm"));
    QCOMPARE(probes.statistics[5].label(), QStringLiteral("drafter layer 1"));
    QCOMPARE(probes.statistics[0].positions(), static_cast<std::size_t>(fixture_.anchor));
    QCOMPARE(probes.other.size(), std::size_t{3});  // the parity statistics
    // Mean and max over heads.
    const AttentionLayer& l = probes.attention[1];
    const std::vector<float> mean = reduceHeads(l, false), max = reduceHeads(l, true);
    const std::int64_t key = 2 * 1 + 1;  // head 0's peak in layer 1
    float sum = 0, top = 0;
    for (int h = 0; h < 4; ++h) sum += l.at(h, 2, key), top = std::max(top, l.at(h, 2, key));
    QCOMPARE(mean[static_cast<std::size_t>(2 * l.keys + key)], sum / 4);
    QCOMPARE(max[static_cast<std::size_t>(2 * l.keys + key)], top);
    QCOMPARE(headsPerKvHead(R"({"num_attention_heads": 32, "num_key_value_heads": 8})"), 4);
    QCOMPARE(headsPerKvHead("not json"), 1);
  }

  void attentionViewShowsEveryLayerAndHead() {
    AttentionView view(context_.get());
    view.resize(1300, 900);
    view.show();
    context_->select({fixture_.gqaRun, 0, fixture_.gqaStep});
    QVERIFY(view.headline().contains(QStringLiteral("anchor position %1").arg(fixture_.anchor)));
    // Named as every panel names them: the run by its name (never "Run 2"), the prompt by its first words.
    QVERIFY2(view.headline().startsWith(QStringLiteral("drafter-gqa, \"Question 0\"")), qPrintable(view.headline()));
    QCOMPARE(view.grid()->headsPerKvHead(), 2);
    QVERIFY2(view.status().contains(QStringLiteral("2 layers x 4 heads")), qPrintable(view.status()));
    QCOMPARE(view.head(), AttentionGrid::kMean);
    // A click on a thumbnail shows that layer and head.
    QTest::mouseClick(view.grid(), Qt::LeftButton, {}, view.grid()->thumbnailRect(1, 3).center());
    QCOMPARE(view.layer(), 1);
    QCOMPARE(view.head(), 3);
    waitForResample(view.plot());
    QCOMPARE(view.plot()->rows(), std::int64_t{fixture_.blockSize});
    QCOMPARE(view.plot()->columns(), fixture_.anchor + fixture_.blockSize);
    // Layer 1 head 3 looks at the anchor slot: its column is the brightest.
    const CsvTable csv = view.exportData();
    QCOMPARE(csv.rows.size(), static_cast<std::size_t>(fixture_.blockSize));
    const int anchorColumn = static_cast<int>(fixture_.anchor) + 1;  // after the row label
    QVERIFY2(csv.header[anchorColumn].startsWith(QStringLiteral("s0 ")), qPrintable(csv.header[anchorColumn]));
    QCOMPARE(csv.rows[3][anchorColumn].toDouble(), 0.6);
    // Context keys carry their position and token text.
    QCOMPARE(csv.header[1], QStringLiteral("0 ") + context_->tokenText(fixture::trueToken(0)));
    test::saveScreenshot(&view, QStringLiteral("attention-head"));
    view.choose(0, AttentionGrid::kMax);
    waitForResample(view.plot());
    test::saveScreenshot(&view, QStringLiteral("attention-max"));
  }

  void blockWithoutAttentionOffersTheEngine() {
    InspectClient engine;
    context_->setInspectClient(&engine);
    AttentionView view(context_.get());
    context_->select({1, 0, fixture_.bareStep});
    QVERIFY(view.probes().empty());
    QVERIFY2(view.status().contains(QStringLiteral("Fetch from engine")), qPrintable(view.status()));
    QVERIFY(view.fetchButton()->isEnabled());
    // What it would ask: the prompt and the response through the anchor, the run's models.
    QString why;
    const auto request = inspectRequestFor(*context_, fixture_.bareStep, &why);
    QVERIFY2(request.has_value(), qPrintable(why));
    QCOMPARE(request->ids.size(), static_cast<std::size_t>(fixture_.anchor + 1));
    QCOMPARE(request->ids[0], std::int64_t{fixture::trueToken(0)});
    QCOMPARE(request->anchor, fixture_.anchor);
    QCOMPARE(request->target, std::string("/models/target"));
    QCOMPARE(request->drafter, std::string("/models/drafter-b"));
    QCOMPARE(request->stepId, fixture_.bareStep);
    QCOMPARE(request->blockSize, std::optional<int>(fixture_.blockSize));
    // A later step: the rebuilt response reaches its anchor.
    const auto later = context_->steps(1, 0).back();
    const auto laterRequest = inspectRequestFor(*context_, later.stepId, &why);
    QVERIFY(laterRequest.has_value());
    QCOMPARE(laterRequest->ids.size(), static_cast<std::size_t>(later.anchorPosition + 1));
    for (std::int64_t p = 0; p <= later.anchorPosition; ++p)
      QCOMPARE(laterRequest->ids[static_cast<std::size_t>(p)], std::int64_t{fixture::trueToken(p)});
  }

  // An engine that cannot be started is said so in the view (through the context, as every
  // answer is), and the next try starts it anew.
  void anEngineThatCannotStartIsReported() {
    InspectClient engine;
    engine.setLaunch({{}, QStringLiteral("/nonexistent/dflash-eval")});
    context_->setInspectClient(&engine);
    AttentionView view(context_.get());
    context_->select({1, 0, fixture_.bareStep});
    QSignalSpy failed(context_.get(), &SessionContext::inspectFailed);
    view.fetchFromEngine();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QVERIFY2(view.status().contains(QStringLiteral("could not start the engine")), qPrintable(view.status()));
    QVERIFY(!context_->isInspecting());
    QVERIFY(view.fetchButton()->isEnabled());
    view.fetchFromEngine();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 10000);
  }

  // The main window inspects blocks with the engine its Run dialog names (e.g. behind ssh).
  void theWindowInspectsWithTheRunDialogsEngine() {
    MainWindow window;
    window.runDialog()->setEngine(QStringLiteral("ssh gpu-host"), QStringLiteral("/opt/dfi/dflash-eval"));
    emit window.runDialog()->sessionStarted(path_);
    QCOMPARE(window.inspectClient()->launch().enginePath, QStringLiteral("/opt/dfi/dflash-eval"));
    QCOMPARE(window.inspectClient()->launch().commandPrefix, (QStringList{"ssh", "gpu-host"}));
    QCOMPARE(window.context()->path(), path_);
  }

  void statisticsCurvesHistogramAndMarkers() {
    StatsView view(context_.get());
    view.resize(1300, 900);
    view.show();
    context_->select({fixture_.gqaRun, 0, fixture_.gqaStep});
    QCOMPARE(view.tensorBox()->count(), 7);  // six tensors and the overview
    QCOMPARE(view.curves()->graphCount(), 4);  // mean, std, rms, abs-max
    QVERIFY(!view.difference()->isVisible());
    QCOMPARE(view.histogram()->plottableCount(), 1);
    // Parity in words, not field names: the block's 7 drafted tokens agree.
    QVERIFY2(view.status().contains(QStringLiteral("Train/eval parity holds")), qPrintable(view.status()));
    QVERIFY2(view.status().contains(QStringLiteral("7 of 7 drafted tokens agree")), qPrintable(view.status()));
    QVERIFY2(!view.status().contains(QStringLiteral("max_abs_diff")), qPrintable(view.status()));
    // Context rows are sequence positions ending at the anchor.
    QCOMPARE(view.curves()->graph(0)->data()->at(0)->key, 0.0);
    QCOMPARE(view.curves()->graph(0)->dataCount(), static_cast<int>(fixture_.anchor));
    test::saveScreenshot(&view, QStringLiteral("statistics-tap"));
    view.chooseSeries(5);  // drafter layer 1: a NaN at slot 5
    QCOMPARE(view.curves()->graphCount(), 5);
    QCOMPARE(view.curves()->graph(4)->dataCount(), 1);
    QCOMPARE(view.curves()->graph(4)->data()->at(0)->key, 5.0);
    QVERIFY2(view.status().contains(QStringLiteral("3 NaN")), qPrintable(view.status()));
    test::saveScreenshot(&view, QStringLiteral("statistics-nan"));
  }

  void statisticsOverlayAnotherRun() {
    StatsView view(context_.get());
    view.resize(1300, 900);
    view.show();
    context_->select({fixture_.gqaRun, 0, fixture_.gqaStep});
    // drafter-a's block at the same prompt and anchor is offered; drafter-b's, which holds no
    // statistics, is not.
    QVERIFY(view.compareBox()->findData(qint64{fixture_.aStep}) > 0);
    QCOMPARE(view.compareBox()->findData(qint64{fixture_.bareStep}), -1);
    view.compareWithStep(fixture_.aStep);
    QVERIFY(view.difference()->isVisible());
    QCOMPARE(view.curves()->graphCount(), 8);
    QCOMPARE(view.difference()->graphCount(), 4);
    const QCPGraph* std = view.difference()->graph(2);
    QCOMPARE(std->name(), QStringLiteral("std"));
    const auto* d = std->data().data();
    // A's std at position 2 is 1.2, B's (scale 1.3) 1.56.
    QVERIFY(std::abs(d->at(2)->value - (1.2 - 1.3 * 1.2)) < 1e-5);
    const CsvTable csv = view.exportData();
    QVERIFY(csv.header.contains(QStringLiteral("A-B absmax")));
    QCOMPARE(csv.rows.size(), static_cast<std::size_t>(fixture_.anchor));
    test::saveScreenshot(&view, QStringLiteral("statistics-overlay"));
    // The overview: one point per tensor, A against B, and where NaNs are.
    view.chooseSeries(6);
    QCOMPARE(view.tensorBox()->count(), 7);
    QCOMPARE(view.curves()->graphCount(), 7);  // three summaries of A and B, and the NaN marker
    QCOMPARE(view.curves()->graph(0)->dataCount(), 6);
    QCOMPARE(view.curves()->graph(6)->data()->at(0)->key, 5.0);
    QVERIFY(view.difference()->isVisible());
    QVERIFY2(view.status().contains(QStringLiteral("NaN or Inf in: drafter layer 1")), qPrintable(view.status()));
    QCOMPARE(view.exportData().rows.size(), std::size_t{6});
    test::saveScreenshot(&view, QStringLiteral("statistics-overview"));
    view.chooseSeries(0);
    // drafter-b's block has none (asked for by id): said, no difference drawn.
    view.compareWithStep(fixture_.bareStep);
    QVERIFY(!view.difference()->isVisible());
    QVERIFY2(view.status().contains(QStringLiteral("no statistics")), qPrintable(view.status()));
  }

  // Where the mean is 0, std and rms are one curve: both stay visible (std was drawn under rms).
  void everyStatisticStaysVisible() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("centred.dfi"));
    session::StepId stepId = 0;
    session::RunId runId = 0;
    {
      session::Writer writer(path.toStdString(), {.mode = session::OpenMode::Overwrite});
      session::RunRecord run;
      run.name = "centred";
      run.blockSize = 8;
      run.topK = 1;
      runId = writer.addRun(run);
      session::StepRecord step = fixture::fixtureStep(0, 0, 0, 12, 7, 1);
      step.runId = runId;
      stepId = writer.addStep(step);
      namespace hs = session::hidden_statistics;
      for (const auto stat : hs::kPerPositionStats) {
        std::vector<float> v;
        for (int i = 0; i < 12; ++i)
          v.push_back(stat == "mean" || stat == "nan" || stat == "inf" ? 0.0f
                      : stat == "absmax"                                 ? 3.0f + 0.1f * static_cast<float>(i)
                                                                         : 1.0f + 0.05f * static_cast<float>(i));
        writer.addStatistic({runId, stepId, hs::statisticName(hs::kTargetTap, stat), 2, -1, v});
      }
      writer.close();
    }
    const auto context = test::openSession(path);
    QVERIFY(context);
    StatsView view(context.get());
    view.resize(1000, 700);
    view.show();
    context->select({runId, 0, stepId});
    QCOMPARE(view.curves()->graphCount(), 4);
    view.curves()->replot();
    const QImage image = view.curves()->toPixmap().toImage();
    auto pixelsOf = [&](QColor colour) {
      int n = 0;
      for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) n += test::similarColour(image.pixelColor(x, y), colour, 7);
      return n;
    };
    for (int g = 0; g < view.curves()->graphCount(); ++g) {
      const QCPGraph* graph = view.curves()->graph(g);
      // Each curve shows in the plot area well beyond its legend swatch (a few dozen pixels).
      QVERIFY2(pixelsOf(graph->pen().color()) > 400,
               qPrintable(QStringLiteral("%1: %2 pixels").arg(graph->name()).arg(pixelsOf(graph->pen().color()))));
    }
    test::saveScreenshot(&view, QStringLiteral("statistics-centred"));
  }

  // A teacher-forced step records the rows since the previous anchor; its curves show the whole
  // context, the earlier anchors' rows before its own, and another run's block lines up with it.
  void teacherForcedBlocksShowTheirWholeContext() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("teacher-forced.dfi"));
    const std::int64_t anchors[] = {5, 6, 9};
    std::vector<session::StepId> steps[2];
    session::RunId runs[2] = {0, 0};
    {
      session::Writer writer(path.toStdString(), {.mode = session::OpenMode::Overwrite});
      namespace hs = session::hidden_statistics;
      for (int r = 0; r < 2; ++r) {
        session::RunRecord run;
        run.name = r == 0 ? "tf-a" : "tf-b";
        run.blockSize = 4;
        run.topK = 1;
        run.mode = session::EvaluationMode::TeacherForced;
        runs[r] = writer.addRun(run);
        std::int64_t previous = 0;
        for (int i = 0; i < 3; ++i) {
          // Drafter b lacks the statistics of its middle anchor: its rows stop joining there.
          session::StepRecord step = fixture::fixtureStep(0, 0, i, anchors[i], 3, 1);
          step.runId = runs[r];
          step.mode = session::EvaluationMode::TeacherForced;
          steps[r].push_back(writer.addStep(step));
          if (r == 1 && i == 1) {
            previous = anchors[i];
            continue;
          }
          for (const auto stat : hs::kPerPositionStats) {
            std::vector<float> v;  // the mean at position p is p (B's: 2p)
            for (std::int64_t p = previous; p < anchors[i]; ++p)
              v.push_back(stat == "mean" ? static_cast<float>((r + 1) * p) : stat == "nan" || stat == "inf" ? 0.0f : 1.0f);
            writer.addStatistic({runs[r], steps[r].back(), hs::statisticName(hs::kDrafterFc, stat), -1, -1, v});
          }
          previous = anchors[i];
        }
      }
      writer.close();
    }
    const auto context = test::openSession(path);
    QVERIFY(context);
    StatsView view(context.get());
    view.resize(1000, 700);
    view.show();
    context->select({runs[0], 0, steps[0][2]});
    const QCPGraph* mean = view.curves()->graph(0);
    QCOMPARE(mean->name(), QStringLiteral("mean"));
    QCOMPARE(mean->dataCount(), 9);
    for (int p = 0; p < 9; ++p) {
      QCOMPARE(mean->data()->at(p)->key, static_cast<double>(p));
      QCOMPARE(mean->data()->at(p)->value, static_cast<double>(p));
    }
    QVERIFY2(view.status().contains(QStringLiteral("Positions 6–8 are the rows this block added")),
             qPrintable(view.status()));
    QCOMPARE(view.curves()->itemCount(), 1);  // the shaded band of the block's own rows
    QCOMPARE(view.exportData().rows.size(), std::size_t{9});
    test::saveScreenshot(&view, QStringLiteral("statistics-teacher-forced"));
    // B's rows join only back to its middle anchor: its positions 6-8, aligned with A's.
    view.compareWithStep(steps[1][2]);
    QVERIFY(view.difference()->isVisible());
    const QCPGraph* meanB = view.curves()->graph(1);
    QCOMPARE(meanB->name(), QStringLiteral("mean (B)"));
    QCOMPARE(meanB->dataCount(), 3);
    QCOMPARE(meanB->data()->at(0)->key, 6.0);
    QCOMPARE(meanB->data()->at(0)->value, 12.0);
    const QCPGraph* meanDifference = view.difference()->graph(0);
    QCOMPARE(meanDifference->dataCount(), 3);
    QCOMPARE(meanDifference->data()->at(0)->key, 6.0);
    QCOMPARE(meanDifference->data()->at(0)->value, 6.0 - 12.0);
    const CsvTable csv = view.exportData();
    QCOMPARE(csv.rows.size(), std::size_t{9});
    const auto meanBColumn = csv.header.indexOf(QStringLiteral("B mean"));
    QCOMPARE(csv.rows[5][meanBColumn], QString());  // B has no row at position 5
    QCOMPARE(csv.rows[6][meanBColumn], QStringLiteral("12"));
    // The first block of the pass has nothing before it: its own rows, nothing shaded.
    context->select({runs[0], 0, steps[0][0]});
    QCOMPARE(view.curves()->graph(0)->dataCount(), 5);
    QCOMPARE(view.curves()->itemCount(), 0);
  }

  void statisticsOverlayAnImportedDump() {
    // transformers' output_hidden_states: hidden_states.2 is the output of layer 1 (our tap 1).
    const std::int64_t positions = fixture_.anchor + 4, hidden = 16;
    std::vector<float> values;
    for (std::int64_t p = 0; p < positions; ++p)
      for (std::int64_t i = 0; i < hidden; ++i) values.push_back(static_cast<float>(p) * (i % 2 ? 1.0f : -1.0f));
    values[static_cast<std::size_t>(4 * hidden)] = std::numeric_limits<float>::quiet_NaN();
    const QString dump = dir_.filePath(QStringLiteral("theirs.safetensors"));
    tensorfile::SafetensorsWriter writer(dump.toStdString());
    writer.add("hidden_states.2", tensorfile::DType::F32, {1, positions, hidden},
               std::as_bytes(std::span<const float>(values)));
    writer.finish();

    StatsView view(context_.get());
    view.resize(1300, 900);
    view.show();
    context_->select({fixture_.gqaRun, 0, fixture_.gqaStep});
    view.importDump(dump);
    QCOMPARE(view.compareBox()->currentData().toLongLong(), qint64{-1});
    QCOMPARE(view.curves()->graphCount(), 9);  // A and B, and B's NaN marker
    QCOMPARE(view.curves()->graph(8)->data()->at(0)->key, 4.0);
    QVERIFY2(view.status().contains(QStringLiteral("B: 1 NaN")), qPrintable(view.status()));
    // Their rms at position p is p; abs-max too; the mean 0. Position 4 has a NaN (not counted).
    const auto* rmsB = view.curves()->graph(5)->data().data();
    QCOMPARE(rmsB->at(7)->value, 7.0);
    const CsvTable csv = view.exportData();
    const int nanColumn = static_cast<int>(csv.header.indexOf(QStringLiteral("B nan")));
    QCOMPARE(csv.rows[4][nanColumn], QStringLiteral("1"));
    QCOMPARE(view.histogram()->graphCount(), 1);  // the dump's histogram over its own range
    QCOMPARE(view.histogram()->graph(0)->dataCount(), 64);
    test::saveScreenshot(&view, QStringLiteral("statistics-dump"));
    // fc has no counterpart in the dump: the reason is shown.
    view.chooseSeries(2);
    QVERIFY(!view.difference()->isVisible());
    QVERIFY2(view.status().contains(QStringLiteral("no tensor")), qPrintable(view.status()));
  }

  // An imported dump's statistics are dfi::analysis's definition, the engine's too
  // (tests/engine/test_hidden_stats.cpp): the same values give the same numbers, NaN and Inf
  // included, whichever side computed them.
  void dumpStatisticsAreTheAnalysisDefinition() {
    const std::int64_t positions = 5, hidden = 6;
    std::vector<float> values;
    for (std::int64_t i = 0; i < positions * hidden; ++i) values.push_back(std::sin(static_cast<float>(i)) * 3.0f + 0.25f);
    values[7] = std::numeric_limits<float>::quiet_NaN();
    values[14] = std::numeric_limits<float>::infinity();
    values[15] = -std::numeric_limits<float>::infinity();
    const QString dump = dir_.filePath(QStringLiteral("awkward.safetensors"));
    tensorfile::SafetensorsWriter writer(dump.toStdString());
    writer.add("hidden_states.2", tensorfile::DType::F32, {positions, hidden}, std::as_bytes(std::span<const float>(values)));
    writer.finish();

    StatisticSeries ours;  // the session's tap 1 over positions [1, 5)
    ours.tensor = "target.tap";
    ours.layer = 1;
    ours.stats["mean"].resize(4);
    QString why;
    const std::optional<StatisticSeries> theirs = ImportedDump(dump.toStdString()).seriesFor(ours, positions, &why);
    QVERIFY2(theirs.has_value(), qPrintable(why));
    const std::vector<double> rows(values.begin() + hidden, values.end());
    const auto expected = analysis::hiddenStatisticRecords(rows, hidden, "target.tap", 1);
    QCOMPARE(theirs->stats.size(), expected.size());
    for (const session::StatisticRecord& r : expected) {
      const std::vector<float>* got = theirs->stat(r.name.substr(std::string("target.tap.").size()));
      QVERIFY2(got, qPrintable(QString::fromStdString(r.name)));
      QCOMPARE(*got, r.values);
    }
    QCOMPARE(theirs->stat("nan")->at(0), 1.0f);  // position 1 holds the NaN
    QCOMPARE(theirs->stat("inf")->at(1), 2.0f);  // position 2 both infinities
  }

  // A long context: 4 layers x 32 heads x 16 slots x (2048 + 16) keys (17 MB of probabilities)
  // load, reduce and thumbnail; the map resamples to the viewport. How fast is
  // bench/bench_ui_attention's figure: a time limit here fails on a loaded or sanitised build.
  void longContextStaysResponsive() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("long.dfi"));
    const int layers = 4, heads = 32, block = 16;
    const std::int64_t contextLength = 2048, keys = contextLength + block;
    session::StepId stepId = 0;
    session::RunId runId = 0;
    {
      session::Writer writer(path.toStdString(), {.mode = session::OpenMode::Overwrite});
      session::RunRecord run;
      run.name = "long";
      run.blockSize = block;
      run.drafter.configJson = R"({"num_attention_heads": 32, "num_key_value_heads": 8})";
      runId = writer.addRun(run);
      session::StepRecord step;
      step.runId = runId;
      step.anchorPosition = contextLength;
      step.draftTokens.assign(block - 1, 1);
      step.targetTokens.assign(block - 1, 1);
      step.maskVariant = "reference";
      stepId = writer.addStep(step);
      std::vector<float> probs(static_cast<std::size_t>(heads * block * keys));
      for (std::size_t i = 0; i < probs.size(); ++i) probs[i] = static_cast<float>((i * 2654435761u) % 1000) / 1e6f;
      for (int l = 0; l < layers; ++l) {
        session::TensorRecord t;
        t.info = {0, runId, stepId, "drafter.layers." + std::to_string(l) + ".attn.probs", l, -1,
                  session::TensorDType::F32, {heads, block, keys}, "head,query,key", 0};
        t.data.resize(probs.size() * sizeof(float));
        std::memcpy(t.data.data(), probs.data(), t.data.size());
        writer.addTensor(t);
      }
      writer.close();
    }
    const auto context = test::openSession(path);
    QVERIFY(context);
    AttentionView view(context.get());
    view.resize(1300, 900);
    view.show();
    QElapsedTimer timer;
    timer.start();
    context->select({runId, 0, stepId});
    const qint64 loaded = timer.elapsed();
    waitForResample(view.plot());
    qInfo("long context: loaded and drawn the grid in %lld ms, map resampled by %lld ms", loaded, timer.elapsed());
    QCOMPARE(view.probes().attention.size(), std::size_t{4});
    QVERIFY(view.plot()->sampledSize().width() < keys);  // never more columns than pixels
    test::saveScreenshot(&view, QStringLiteral("attention-long-context"));
  }

  void rendersBothViews() {
    QTemporaryDir out;
    QCOMPARE(renderViews({path_, {QStringLiteral("attention"), QStringLiteral("statistics")}, fixture_.gqaStep,
                          out.path(), QStringLiteral("png")}),
             0);
    const QImage attention(out.filePath(QStringLiteral("attention.png")));
    QVERIFY(!attention.isNull() && attention.width() >= 1000);
    int bright = 0;  // the top of the colour ramp (yellow) where heads peak
    for (int y = 0; y < attention.height(); y += 2)
      for (int x = 0; x < attention.width(); x += 2)
        bright += test::similarColour(attention.pixelColor(x, y), AttentionGrid::colour(1.0), 30);
    QVERIFY2(bright > 50, qPrintable(QString::number(bright)));
    QVERIFY(!QImage(out.filePath(QStringLiteral("statistics.png"))).isNull());
    QFile::copy(out.filePath(QStringLiteral("attention.png")),
                QStringLiteral(DFI_BINARY_DIR "/screenshots/render-attention.png"));
    QFile::copy(out.filePath(QStringLiteral("statistics.png")),
                QStringLiteral(DFI_BINARY_DIR "/screenshots/render-statistics.png"));
    for (const QString& format : {QStringLiteral("svg"), QStringLiteral("pdf")})
      QCOMPARE(renderViews({path_, {QStringLiteral("statistics")}, fixture_.gqaStep, out.path(), format}), 0);
  }
};

QTEST_MAIN(TestProbeViews)
#include "test_probe_views.moc"
