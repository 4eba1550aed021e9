// The attention and statistics views against the real engine: a session recorded by
// `dflash-eval serve` (a live run of the drafter oracle's tiny models), a block without
// attention fetched on demand through an inspect request, stored into that session, and shown
// again from the file alone by a fresh context with no engine.

#include <cmath>
#include <fstream>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "engine/engine_client.h"
#include "session/file_session_source.h"
#include "engine/inspect_client.h"
#include "session/session_context.h"
#include "dfi/base/field_table.h"
#include "dfi/session/reader.h"
#include "dfi/session/record_fields.h"
#include "gui_test_support.h"
#include "models/block_probes.h"
#include "widgets/heatmap_plot.h"
#include "panels/attention_view.h"
#include "panels/stats_view.h"

using namespace dfi;
using namespace dfi::ui;

namespace {

const QString kLive = QStringLiteral(DFI_ORACLE_DIR);

std::unique_ptr<SessionContext> openContext(const QString& path) {
  auto context = std::make_unique<SessionContext>(
      [](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
  context->setFollowing(false);
  if (!context->open(path)) return nullptr;
  return context;
}

// Records `modes` of the oracle's live models on one prompt into `session` through the engine.
bool recordSession(const QTemporaryDir& dir, const QString& session, const std::vector<std::string>& modes,
                   bool hiddenStatistics) {
  const QString prompts = dir.filePath(QStringLiteral("prompts.jsonl"));
  {
    std::ofstream out(prompts.toStdString());
    out << "{\"ids\": [1, 4, 2, 7, 3, 8, 5]}\n";
  }
  EngineClient runner;
  QSignalSpy finished(&runner, &EngineClient::finished);
  QSignalSpy failed(&runner, &EngineClient::failed);
  settings::RunSettings run;
  run.target = (kLive + "/target").toStdString();
  run.drafters = {(kLive + "/drafter").toStdString()};
  run.prompts = prompts.toStdString();
  run.modes.clear();
  for (const std::string& mode : modes) run.modes.push_back(*parseEnum<settings::EvaluationMode>(mode));
  run.maxNewTokens = 24;
  run.hiddenStatistics = hiddenStatistics;
  runner.start({{}, QStringLiteral(DFLASH_EVAL)}, run, session);
  if (!QTest::qWaitFor([&] { return finished.count() + failed.count() > 0; }, 240000)) return false;
  return failed.isEmpty();
}

}  // namespace

class TestInspectEngine : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  // `run --hidden-stats`: the statistics view shows a teacher-forced block's recorded statistics
  // and parity with no engine; an inspect of the same block agrees with them where their
  // positions overlap (recorded: [previous anchor, anchor); inspected: [0, anchor)).
  void recordedStatisticsAgreeWithAnInspect() {
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("tf.dfi"));
    QVERIFY(recordSession(dir, session, {"teacher-forced"}, true));
    auto context = openContext(session);
    QVERIFY(context);
    const auto runs = context->runs();
    QVERIFY(!runs.empty());
    const auto steps = context->steps(runs[0].runId, 0);
    QVERIFY(steps.size() >= 2);
    const session::StepRecord& step = steps[1];
    QCOMPARE(step.mode, session::EvaluationMode::TeacherForced);
    auto view = std::make_unique<StatsView>(context.get());
    view->resize(1200, 800);
    view->show();
    context->select({step.runId, step.promptId, step.stepId});
    const BlockProbes recorded = view->probes();
    QVERIFY(recorded.statistics.size() >= 4);
    QVERIFY2(view->status().contains(QStringLiteral("parity")), qPrintable(view->status()));
    test::saveScreenshot(view.get(), QStringLiteral("engine-recorded-statistics"));
    view.reset();

    QString why;
    const auto request = inspectRequestFor(*context, step.stepId, &why);
    QVERIFY2(request.has_value(), qPrintable(why));
    InspectClient engine;
    engine.setLaunch({{}, QStringLiteral(DFLASH_EVAL)});
    QSignalSpy answered(&engine, &InspectClient::answered);
    QSignalSpy failed(&engine, &InspectClient::failed);
    engine.inspect(*request, session);
    QTRY_VERIFY_WITH_TIMEOUT(answered.count() + failed.count() > 0, 240000);
    QVERIFY(failed.isEmpty());
    const BlockProbes inspected = groupStatistics(answered.front().front().value<InspectAnswer>().statistics);
    int compared = 0;
    for (const StatisticSeries& r : recorded.statistics) {
      if (r.tensor != "target.tap") continue;
      for (const StatisticSeries& i : inspected.statistics) {
        if (i.tensor != r.tensor || i.layer != r.layer) continue;
        const auto& a = *r.stat("rms");
        const auto& b = *i.stat("rms");
        QVERIFY(b.size() >= a.size());
        const std::size_t offset = b.size() - a.size();
        for (std::size_t p = 0; p < a.size(); ++p)
          QVERIFY2(std::abs(a[p] - b[offset + p]) <= 1e-4f * std::max(1.0f, std::abs(a[p])),
                   qPrintable(QStringLiteral("tap %1 position %2: %3 vs %4").arg(r.layer).arg(p).arg(a[p]).arg(b[offset + p])));
        ++compared;
      }
    }
    QVERIFY(compared > 0);
  }

  void fetchesStoresAndReopensWithoutTheEngine() {
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("live.dfi"));
    QVERIFY(recordSession(dir, session, {"live"}, false));

    auto context = openContext(session);
    QVERIFY(context);
    const auto runs = context->runs();
    QCOMPARE(static_cast<int>(runs.size()), 1);
    const auto steps = context->steps(runs[0].runId, 0);
    QVERIFY(steps.size() >= 2);
    const session::StepRecord& step = steps[1];  // its anchor lies in the response
    QVERIFY(step.anchorPosition > 7);

    InspectClient engine;
    engine.setLaunch({{}, QStringLiteral(DFLASH_EVAL)});
    context->setInspectClient(&engine);
    auto attentionView = std::make_unique<AttentionView>(context.get());
    auto statisticsView = std::make_unique<StatsView>(context.get());
    AttentionView& attention = *attentionView;
    StatsView& statistics = *statisticsView;
    context->select({step.runId, step.promptId, step.stepId});
    QVERIFY(attention.probes().attention.empty());
    QVERIFY(statistics.probes().statistics.empty());
    QSignalSpy answered(context.get(), &SessionContext::inspectAnswered);
    QSignalSpy failed(context.get(), &SessionContext::inspectFailed);
    attention.fetchFromEngine();
    QTRY_VERIFY_WITH_TIMEOUT(answered.count() + failed.count() > 0, 240000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
    const auto answer = answered.front().front().value<InspectAnswer>();
    QVERIFY2(answer.stored, qPrintable(answer.storeError));

    // Both views now show the block: every drafter layer, rows that are distributions.
    const nlohmann::json config = nlohmann::json::parse(runs[0].drafter.configJson);
    const int layers = config.at("num_hidden_layers").get<int>();
    QCOMPARE(static_cast<int>(attention.probes().attention.size()), layers);
    const AttentionLayer first = attention.probes().attention.front();
    QCOMPARE(first.heads, config.at("num_attention_heads").get<std::int64_t>());
    QCOMPARE(first.queries, std::int64_t{runs[0].blockSize});
    for (std::int64_t h = 0; h < first.heads; ++h)
      for (std::int64_t q = 0; q < first.queries; ++q) {
        double sum = 0;
        for (std::int64_t k = 0; k < first.keys; ++k) sum += first.at(h, q, k);
        QVERIFY2(std::abs(sum - 1.0) < 1e-4, qPrintable(QString::number(sum)));
      }
    QVERIFY(statistics.probes().statistics.size() >= static_cast<std::size_t>(layers + 2));
    attention.resize(1200, 800);
    attention.show();
    statistics.resize(1200, 800);
    statistics.show();
    attention.choose(layers - 1, 0);
    QTRY_VERIFY_WITH_TIMEOUT(!attention.plot()->isResampling() && attention.plot()->sampledSize().width() > 0, 5000);
    test::saveScreenshot(&attention, QStringLiteral("engine-attention"));
    test::saveScreenshot(&statistics, QStringLiteral("engine-statistics"));

    // Reopened without an engine: the same records, from the file.
    attentionView.reset();
    statisticsView.reset();
    context.reset();
    auto reopened = openContext(session);
    QVERIFY(reopened);
    AttentionView again(reopened.get());
    reopened->select({step.runId, step.promptId, step.stepId});
    QCOMPARE(static_cast<int>(again.probes().attention.size()), layers);
    QCOMPARE(again.probes().attention.front().probs, first.probs);
  }
};

QTEST_MAIN(TestInspectEngine)
#include "test_inspect_engine.moc"
