// EngineClient against a scripted engine: `sh -c 'cat STREAM; cat >/dev/null'` stands in for
// `dflash-eval serve` and plays back frames written here, so the ids it streams can be any the
// engine's own file might hold. The local session keeps them: a run and a step have one id in
// the engine's file, on the stream and in the GUI's copy. An engine that speaks another
// protocol version, or streams ids that go backwards, is a failure message, not a crash.

#include <fstream>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "context/engine_client.h"
#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/reader.h"
#include "session_fixture.h"

using namespace dfi;
using namespace dfi::ui;

namespace {

constexpr int kSlots = 7;
constexpr int kTopK = 4;

session::RunRecord run(session::RunId id, const std::string& name) {
  session::RunRecord r;
  r.runId = id;
  r.name = name;
  r.blockSize = kSlots + 1;
  r.topK = kTopK;
  r.device = "cpu";
  r.dtype = "float32";
  r.startedAt = 1000;
  return r;
}

// What an engine whose own file already held other records would stream: runs 7 and 9, steps
// 100, 105 and 200, a tree, a statistic and a tensor keyed to them, run 7's final update.
std::vector<protocol::Frame> recordedRun() {
  std::vector<protocol::Frame> frames;
  auto add = [&](const protocol::Record& record) { frames.push_back(protocol::encodeRecord(record)); };
  add(fixture::fixtureTokenStrings());
  add(run(7, "drafter-a/live/reference"));
  const auto promptTokens = fixture::fixturePromptTokens(0);
  add(session::PromptRecord{.runId = 7, .promptId = 0, .text = "Question 0", .promptTokens = promptTokens});
  std::int64_t anchor = static_cast<std::int64_t>(promptTokens.size());
  for (session::StepId id : {100, 105}) {
    session::StepRecord step = fixture::fixtureStep(0, 0, id == 100 ? 0 : 1, anchor, kSlots, kTopK);
    step.stepId = id;
    step.runId = 7;
    anchor += step.acceptedCount + 1;
    add(step);
  }
  add(session::TreeRecord{.stepId = 105, .nodeTokens = {3, 4, 5}, .nodeLogProbs = {0, -0.5f, -1.5f},
                          .parents = {-1, 0, 1}, .acceptedPath = {0, 1}});
  add(session::StatisticRecord{.runId = 7, .stepId = 100, .name = "drafter.fc.rms", .values = {1, 2}});
  session::TensorRecord mask;
  mask.info = {.tensorId = 3, .runId = 7, .stepId = 105, .name = "drafter.mask.full",
               .dtype = session::TensorDType::U8, .shape = {2, 3}};
  mask.data = {1, 0, 0, 1, 1, 0};
  add(mask);
  session::RunRecord finished = run(7, "drafter-a/live/reference");
  finished.finishedAt = 1234;
  add(finished);
  add(run(9, "drafter-b/live/reference"));
  add(session::PromptRecord{.runId = 9, .promptId = 0, .text = "Question 0", .promptTokens = promptTokens});
  session::StepRecord step = fixture::fixtureStep(1, 0, 0, static_cast<std::int64_t>(promptTokens.size()), kSlots, kTopK);
  step.stepId = 200;
  step.runId = 9;
  add(step);
  return frames;
}

class ScriptedEngine {
 public:
  ScriptedEngine(const QTemporaryDir& dir, const protocol::Hello& hello, const std::vector<protocol::Frame>& records,
                 const protocol::Reply& last)
      : stream_(dir.filePath(QStringLiteral("stream.bin"))), session_(dir.filePath(QStringLiteral("local.dfi"))) {
    std::ofstream out(stream_.toStdString(), std::ios::binary);
    protocol::writeFrame(out, protocol::encodeMessage(hello));
    for (const auto& frame : records) protocol::writeFrame(out, frame);
    protocol::writeFrame(out, protocol::encodeMessage(last));
  }

  // sh runs the script with the engine path as $0 and "serve" as $1; the script plays the
  // stream back, then waits for the GUI to close its input as the engine does.
  EngineLaunch launch() const {
    return {{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("cat \"$0\"; cat >/dev/null")}, stream_};
  }
  const QString& session() const { return session_; }

 private:
  QString stream_;
  QString session_;
};

protocol::Done done() {
  return {.requestId = 1, .runs = {{.runId = 7, .name = "drafter-a/live/reference", .steps = 2, .tauReference = 3}}};
}

}  // namespace

class TestEngineClient : public QObject {
  Q_OBJECT
 private slots:
  void theLocalSessionKeepsTheEnginesIds() {
    QTemporaryDir dir;
    const ScriptedEngine engine(dir, {}, recordedRun(), done());
    EngineClient client;
    QSignalSpy finished(&client, &EngineClient::finished);
    QSignalSpy failed(&client, &EngineClient::failed);
    client.start(engine.launch(), {}, engine.session());
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 20000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
    QVERIFY(finished.front().front().toString().contains(QStringLiteral("drafter-a/live/reference: 2 steps")));

    session::Reader reader(engine.session().toStdString());
    const auto runs = reader.runs();
    QCOMPARE(runs.size(), std::size_t{2});
    QCOMPARE(runs[0].runId, session::RunId{7});
    QCOMPARE(runs[0].finishedAt, 1234.0);  // the final update of run 7, not a third run
    QCOMPARE(runs[1].runId, session::RunId{9});
    std::vector<session::StepId> steps;
    for (session::RunId r : {7, 9})
      reader.forEachStep(r, [&](const session::StepRecord& step) { steps.push_back(step.stepId); });
    QCOMPARE(steps, (std::vector<session::StepId>{100, 105, 200}));
    QVERIFY(reader.tree(105).has_value());
    QCOMPARE(reader.statistics(7, 100).size(), std::size_t{1});
    const auto tensors = reader.tensors(7, 105);
    QCOMPARE(tensors.size(), std::size_t{1});
    QCOMPARE(tensors[0].tensorId, session::TensorId{3});
    QCOMPARE(reader.readTensor(3).data, (std::vector<std::uint8_t>{1, 0, 0, 1, 1, 0}));
  }

  // Ids that go backwards cannot be kept: the copy stops there with a message.
  void idsThatGoBackwardsAreAFailure() {
    QTemporaryDir dir;
    std::vector<protocol::Frame> records = recordedRun();
    session::StepRecord stale = fixture::fixtureStep(0, 0, 2, 20, kSlots, kTopK);
    stale.stepId = 50;
    stale.runId = 9;
    records.push_back(protocol::encodeRecord(stale));
    const ScriptedEngine engine(dir, {}, records, done());
    EngineClient client;
    QSignalSpy failed(&client, &EngineClient::failed);
    client.start(engine.launch(), {}, engine.session());
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 20000);
    const QString message = failed.front().front().toString();
    QVERIFY2(message.contains(QStringLiteral("50")) && message.contains(QStringLiteral("200")), qPrintable(message));
  }

  void anEngineOfAnotherProtocolIsRefused() {
    QTemporaryDir dir;
    const ScriptedEngine engine(dir, {.protocol = protocol::kProtocolVersion + 1, .engineVersion = "9.9"}, {}, done());
    EngineClient client;
    QSignalSpy ready(&client, &EngineClient::engineReady);
    QSignalSpy failed(&client, &EngineClient::failed);
    client.start(engine.launch(), {}, engine.session());
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 20000);
    QVERIFY2(failed.front().front().toString().contains(QStringLiteral("protocol version")),
             qPrintable(failed.front().front().toString()));
    QCOMPARE(ready.count(), 0);
  }

  void anErrorReplyIsReported() {
    QTemporaryDir dir;
    const ScriptedEngine engine(dir, {}, {}, protocol::ErrorReply{.requestId = 1, .message = "no such drafter", .exitCode = 3});
    EngineClient client;
    QSignalSpy failed(&client, &EngineClient::failed);
    client.start(engine.launch(), {}, engine.session());
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 20000);
    QCOMPARE(failed.front().front().toString(), QStringLiteral("no such drafter"));
  }
};

QTEST_MAIN(TestEngineClient)
#include "test_engine_client.moc"
