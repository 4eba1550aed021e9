// EngineClient against a scripted engine: `sh -c 'cat STREAM; cat >/dev/null'` stands in for
// `dflash-eval serve` and plays back frames written here, so the ids it streams can be any the
// engine's own file might hold. The local session keeps them: a run and a step have one id in
// the engine's file, on the stream and in the GUI's copy. An engine that speaks another
// protocol version, or streams ids that go backwards, is a failure message, not a crash.
// Engine discovery (engine_locator.h) with fake engine files: DFLASH_EVAL, beside the
// inspector, the build tree's app/eval, PATH, and a message naming every place tried; the Run
// dialog honours DFLASH_EVAL, has a browse button per path, remembers its form, and a
// cancelled run ends as "cancelled, N prompts kept".

#include <fstream>

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "engine/engine_client.h"
#include "engine/engine_locator.h"
#include "engine/inspect_client.h"
#include "gui_test_support.h"
#include "windows/run_dialog.h"
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
  // The same engine as an executable file, as `dflash-eval` would be found: `script serve`
  // plays the stream back.
  QString writeScript(const QString& path) const {
    QFile file(path);
    file.open(QIODevice::WriteOnly);
    file.write(QStringLiteral("#!/bin/sh\ncat '%1'\ncat >/dev/null\n").arg(stream_).toUtf8());
    file.close();
    file.setPermissions(file.permissions() | QFile::ExeOwner);
    return path;
  }

 private:
  QString stream_;
  QString session_;
};

protocol::Done done() {
  return {.requestId = 1, .runs = {{.runId = 7, .name = "drafter-a/live/reference", .steps = 2, .tauReference = 3}}};
}

// A file that is executable, as a found engine must be.
QString fakeEngine(const QString& dir) {
  QDir().mkpath(dir);
  const QString path = dir + QStringLiteral("/dflash-eval");
  QFile file(path);
  file.open(QIODevice::WriteOnly);
  file.write("#!/bin/sh\nexit 0\n");
  file.close();
  file.setPermissions(file.permissions() | QFile::ExeOwner);
  return path;
}

// Sets (or unsets, for an empty value) an environment variable for one test.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const QString& value) : name_(name), old_(qgetenv(name)), had_(qEnvironmentVariableIsSet(name)) {
    if (value.isEmpty())
      qunsetenv(name);
    else
      qputenv(name, value.toLocal8Bit());
  }
  ~ScopedEnvironment() {
    if (had_)
      qputenv(name_, old_);
    else
      qunsetenv(name_);
  }

 private:
  const char* name_;
  QByteArray old_;
  bool had_;
};

}  // namespace

class TestEngineClient : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::isolateSettings();
    QSettings().clear();
  }

  void theEngineIsLookedForInOrder() {
    QTemporaryDir dir;
    const QString app = dir.filePath(QStringLiteral("build/app/inspector"));
    const QString pathDir = dir.filePath(QStringLiteral("bin"));
    QDir().mkpath(app);
    // Nothing anywhere: every place is named, and how to set one.
    EngineLocation none = locateEngine({}, app, pathDir);
    QVERIFY(!none.found());
    QCOMPARE(none.tried.size(), 4);
    const QString message = none.notFoundMessage();
    for (const QString& place : {QStringLiteral("DFLASH_EVAL: not set"), app + QStringLiteral("/dflash-eval"),
                                 dir.filePath(QStringLiteral("build/app/eval/dflash-eval")), pathDir})
      QVERIFY2(message.contains(place), qPrintable(message));
    QVERIFY(message.contains(QStringLiteral("Set the environment variable DFLASH_EVAL")));
    // PATH, then the build tree's app/eval, then beside the inspector: each wins over the later.
    const QString onPath = fakeEngine(pathDir);
    QCOMPARE(locateEngine({}, app, QStringLiteral("/nonexistent:") + pathDir).path, onPath);
    const QString buildTree = fakeEngine(dir.filePath(QStringLiteral("build/app/eval")));
    QCOMPARE(locateEngine({}, app, pathDir).path, buildTree);
    const QString beside = fakeEngine(app);
    QCOMPARE(locateEngine({}, app, pathDir).path, beside);
    // DFLASH_EVAL wins over all, and a wrong one is not replaced by a guess.
    const QString chosen = fakeEngine(dir.filePath(QStringLiteral("chosen")));
    QCOMPARE(locateEngine(chosen, app, pathDir).path, chosen);
    const EngineLocation wrong = locateEngine(dir.filePath(QStringLiteral("missing/dflash-eval")), app, pathDir);
    QVERIFY(!wrong.found());
    QVERIFY(wrong.notFoundMessage().contains(QStringLiteral("DFLASH_EVAL: ") + dir.filePath(QStringLiteral("missing"))));
    // A file that is not executable is not an engine.
    QFile::setPermissions(beside, QFile::ReadOwner | QFile::WriteOwner);
    QCOMPARE(locateEngine({}, app, pathDir).path, buildTree);
  }

  // The run client and the inspect client start the engine DFLASH_EVAL names, whatever is on
  // PATH; the Run dialog shows it.
  void dflashEvalIsHonouredEverywhere() {
    QTemporaryDir dir;
    const ScriptedEngine engine(dir, {}, recordedRun(), done());
    const ScopedEnvironment variable("DFLASH_EVAL", engine.writeScript(dir.filePath(QStringLiteral("my-engine"))));
    EngineClient client;
    QSignalSpy finished(&client, &EngineClient::finished);
    QSignalSpy failed(&client, &EngineClient::failed);
    client.start(EngineLaunch{}, {}, engine.session());  // the default launch: "dflash-eval", located
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 20000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));

    RunDialog dialog;
    QCOMPARE(dialog.launch().enginePath, dir.filePath(QStringLiteral("my-engine")));
  }

  void aMissingEngineSaysWhatWasTried() {
    QTemporaryDir dir;
    const QString missing = dir.filePath(QStringLiteral("gone/dflash-eval"));
    const ScopedEnvironment variable("DFLASH_EVAL", missing);
    for (bool inspect : {false, true}) {
      QString message;
      if (inspect) {
        InspectClient client;
        QSignalSpy failed(&client, &InspectClient::failed);
        client.inspect({}, dir.filePath(QStringLiteral("s.dfi")));
        QCOMPARE(failed.count(), 1);
        message = failed.front().front().toString();
      } else {
        EngineClient client;
        QSignalSpy failed(&client, &EngineClient::failed);
        client.start(EngineLaunch{}, {}, dir.filePath(QStringLiteral("s.dfi")));
        QCOMPARE(failed.count(), 1);
        message = failed.front().front().toString();
      }
      QVERIFY2(message.contains(QStringLiteral("DFLASH_EVAL: ") + missing) &&
                   message.contains(QStringLiteral("File > Run Evaluation > Engine")),
               qPrintable(message));
    }
  }

  // A cancelled run is not a failure: the engine's CancelledError ends it as "cancelled" with
  // the number of prompts whose steps were kept; the dialog says so and raises no error.
  void aCancelledRunKeepsItsPrompts() {
    QTemporaryDir dir;
    const ScriptedEngine engine(
        dir, {}, recordedRun(),
        protocol::ErrorReply{.requestId = 1, .message = "evaluation cancelled after 1 of 4 prompt runs", .exitCode = 130});
    RunDialog dialog;
    dialog.setPaths(QStringLiteral("target"), {QStringLiteral("drafter")}, QStringLiteral("prompts.jsonl"),
                    engine.session());
    dialog.setEngine({}, engine.writeScript(dir.filePath(QStringLiteral("engine.sh"))));
    QSignalSpy cancelled(dialog.client(), &EngineClient::cancelled);
    QSignalSpy failed(&dialog, &RunDialog::engineFailed);
    dialog.startRun();
    QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() > 0, 20000);
    QCOMPARE(cancelled.front().front().toInt(), 1);  // prompt 0, in runs 7 and 9
    QCOMPARE(failed.count(), 0);
    const QString status = dialog.findChild<QLabel*>(QStringLiteral("runStatus"))->text();
    QVERIFY2(status.startsWith(QStringLiteral("Cancelled, 1 prompt kept")), qPrintable(status));
    QVERIFY(session::Reader(engine.session().toStdString()).runs().size() == 2);  // what was recorded is kept

    // The form is remembered for the next dialog, and every path it shows has a browse button
    // (the diagnosis's training dump is hidden).
    RunDialog next;
    QCOMPARE(next.launch().enginePath, dir.filePath(QStringLiteral("engine.sh")));
    QCOMPARE(next.findChild<QLineEdit*>(QStringLiteral("sessionField"))->text(), engine.session());
    int browse = 0;
    for (QPushButton* b : next.findChildren<QPushButton*>())
      browse += b->text() == QStringLiteral("Browse...") && b->isVisibleTo(&next);
    QCOMPARE(browse, 5);
    QSettings().clear();
  }

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
