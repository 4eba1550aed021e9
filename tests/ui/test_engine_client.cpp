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
#include <QApplication>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "dfi/analysis/summary_table.h"
#include "engine/engine_client.h"
#include "engine/engine_locator.h"
#include "engine/inspect_client.h"
#include "gui_test_support.h"
#include "windows/main_window.h"
#include "windows/run_dialog.h"
#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/reader.h"
#include "session/session_context.h"
#include "session_fixture.h"
#include "dfi/session/writer.h"

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
  // When the last reply comes: at once, or only once the GUI has sent a second line after its
  // request (a cancel), as the engine answers a cancel; or never: the engine exits with code 3
  // after its records instead (a crash, an out-of-memory kill).
  enum class Last { AtOnce, AfterCancel, ExitInstead };

  ScriptedEngine(const QTemporaryDir& dir, const protocol::Hello& hello, const std::vector<protocol::Frame>& records,
                 const protocol::Reply& last, Last when = Last::AtOnce)
      : stream_(dir.filePath(QStringLiteral("stream.bin"))),
        session_(dir.filePath(QStringLiteral("local.dfi"))),
        when_(when) {
    std::ofstream out(stream_.toStdString(), std::ios::binary);
    protocol::writeFrame(out, protocol::encodeMessage(hello));
    for (const auto& frame : records) protocol::writeFrame(out, frame);
    std::ofstream tail((stream_ + QStringLiteral(".last")).toStdString(), std::ios::binary);
    protocol::writeFrame(when == Last::AtOnce ? out : tail, protocol::encodeMessage(last));
  }

  // sh runs the script with the engine path as $0 and "serve" as $1; the script plays the
  // stream back, then waits for the GUI to close its input as the engine does.
  EngineLaunch launch() const { return {{QStringLiteral("sh"), QStringLiteral("-c"), script(QStringLiteral("\"$0\""))}, stream_}; }
  const QString& session() const { return session_; }
  // Cuts the stream's last `bytes`: the engine died writing a frame.
  void truncate(qint64 bytes) const {
    QFile file(stream_);
    file.resize(file.size() - bytes);
  }
  // The same engine as an executable file, as `dflash-eval` would be found: `script serve`
  // plays the stream back.
  QString writeScript(const QString& path) const {
    QFile file(path);
    file.open(QIODevice::WriteOnly);
    file.write((QStringLiteral("#!/bin/sh\n") + script(QStringLiteral("'") + stream_ + QStringLiteral("'"))).toUtf8());
    file.close();
    file.setPermissions(file.permissions() | QFile::ExeOwner);
    return path;
  }

 private:
  QString script(const QString& stream) const {
    if (when_ == Last::ExitInstead) return QStringLiteral("cat %1\nexit 3\n").arg(stream);
    const QString afterCancel = when_ == Last::AfterCancel
                                    ? QStringLiteral("read request; read cancel; cat %1.last\n").arg(stream)
                                    : QString();
    return QStringLiteral("cat %1\n%2cat >/dev/null\n").arg(stream, afterCancel);
  }

  QString stream_;
  QString session_;
  Last when_;
};

// Model directories as the Run dialog checks them before starting a local engine.
struct FakeModels {
  explicit FakeModels(const QTemporaryDir& dir)
      : target(dir.filePath(QStringLiteral("target"))),
        drafter(dir.filePath(QStringLiteral("drafter"))),
        prompts(dir.filePath(QStringLiteral("prompts.jsonl"))) {
    for (const QString& model : {target, drafter}) {
      QDir().mkpath(model);
      QFile config(model + QStringLiteral("/config.json"));
      config.open(QIODevice::WriteOnly);
      config.write("{}");
    }
    QFile file(prompts);
    file.open(QIODevice::WriteOnly);
    file.write("{\"ids\": [1, 2]}\n");
  }
  QString target, drafter, prompts;
};

// The bytes of a file, to show it untouched.
QByteArray contents(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Clicks the button labelled `text` on the next message box named `name` once it is open.
void answerNextBox(const QString& name, const QString& text) {
  auto* poll = new QTimer;
  poll->setInterval(20);
  QObject::connect(poll, &QTimer::timeout, [poll, name, text] {
    auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
    if (!box || box->objectName() != name) return;
    for (QAbstractButton* button : box->buttons())
      if (button->text() == text) {
        poll->stop();
        poll->deleteLater();
        button->click();
        return;
      }
  });
  poll->start();
}

protocol::Done done() {
  analysis::SummaryRow row{.drafter = "drafter-a", .mode = "live", .variant = "reference", .dataset = "chat"};
  row.responses = 2;
  row.steps = 5;
  row.tau = {3, 2.5, 3.5};
  row.tauVllm = {2.8, 2.6, 3.0};
  row.runIds = {7};
  return {.requestId = 1, .runs = {row}};
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
    const FakeModels models(dir);
    RunDialog dialog;
    dialog.setPaths(models.target, {models.drafter}, models.prompts, engine.session());
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
    // The table `dflash-eval run` prints, from the rows and comparisons the engine sent.
    const protocol::Done sent = done();
    QCOMPARE(finished.front().front().toString(),
             QString::fromStdString(analysis::formatSummaryTable(sent.runs) + analysis::formatComparisons(sent.comparisons)));
    QVERIFY(finished.front().front().toString().contains(QStringLiteral("3.000 [2.500, 3.500]")));

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

  // Appending to a session that holds the same engine's earlier stream: the second copy's ids
  // are moved past the first's, every reference with its record, and the first is untouched.
  void anAppendedRunKeepsTheSessionsRuns() {
    QTemporaryDir dir;
    const ScriptedEngine engine(dir, {}, recordedRun(), done());
    for (session::OpenMode mode : {session::OpenMode::CreateNew, session::OpenMode::Append}) {
      EngineClient client;
      QSignalSpy finished(&client, &EngineClient::finished);
      QSignalSpy failed(&client, &EngineClient::failed);
      client.start(engine.launch(), {}, engine.session(), mode);
      QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 20000);
      QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
    }
    session::Reader reader(engine.session().toStdString());
    std::vector<session::RunId> runs;
    for (const auto& run : reader.runs()) runs.push_back(run.runId);
    QCOMPARE(runs, (std::vector<session::RunId>{7, 9, 16, 18}));  // shifted past run 9
    std::vector<session::StepId> steps;
    for (session::RunId r : runs)
      reader.forEachStep(r, [&](const session::StepRecord& step) { steps.push_back(step.stepId); });
    QCOMPARE(steps, (std::vector<session::StepId>{100, 105, 200, 300, 305, 400}));  // past step 200
    QCOMPARE(reader.run(16)->finishedAt, 1234.0);
    QVERIFY(reader.tree(305).has_value());
    QCOMPARE(reader.statistics(16, 300).size(), std::size_t{1});
    const auto tensors = reader.tensors(16, 305);
    QCOMPARE(tensors.size(), std::size_t{1});
    QCOMPARE(tensors[0].tensorId, session::TensorId{6});
    QCOMPARE(reader.prompts(18).size(), std::size_t{1});
  }

  // An engine that refuses the request records nothing: the session named is not created, or,
  // if it exists, not touched, even when the user chose to replace it; and creating a new file
  // over an existing one is refused before the engine starts.
  void aRefusedRequestTouchesNoFile() {
    QTemporaryDir dir;
    const ScriptedEngine refusing(dir, {}, {}, protocol::ErrorReply{.requestId = 1, .message = "no such target", .exitCode = 3});
    for (session::OpenMode mode : {session::OpenMode::CreateNew, session::OpenMode::Overwrite}) {
      EngineClient client;
      QSignalSpy created(&client, &EngineClient::sessionCreated);
      QSignalSpy failed(&client, &EngineClient::failed);
      client.start(refusing.launch(), {}, refusing.session(), mode);
      QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 20000);
      QCOMPARE(created.count(), 0);
      if (mode == session::OpenMode::CreateNew) {
        QVERIFY(!QFileInfo::exists(refusing.session()));
        session::Writer earlier(refusing.session().toStdString(), {.mode = session::OpenMode::CreateNew});
        earlier.addRun(run(1, "earlier"));
      }
    }
    const QByteArray before = contents(refusing.session());
    QVERIFY(!before.isEmpty());
    QCOMPARE(session::Reader(refusing.session().toStdString()).runs().front().name, std::string("earlier"));

    EngineClient client;
    QSignalSpy failed(&client, &EngineClient::failed);
    client.start(refusing.launch(), {}, refusing.session(), session::OpenMode::CreateNew);
    QCOMPARE(failed.count(), 1);  // at once: no engine started
    QVERIFY2(failed.front().front().toString().contains(QStringLiteral("exists")),
             qPrintable(failed.front().front().toString()));
    QVERIFY(!client.running());
    QCOMPARE(contents(refusing.session()), before);
  }

  // The Run dialog never replaces an existing session unasked: appending is the default, a new
  // file takes a free name, and a replacement needs a second yes.
  void theRunDialogAsksAboutAnExistingSession() {
    QTemporaryDir dir;
    const FakeModels models(dir);
    const ScriptedEngine engine(dir, {}, recordedRun(), done());
    {
      session::Writer earlier(engine.session().toStdString(), {.mode = session::OpenMode::CreateNew});
      earlier.addRun(run(1, "earlier"));
    }
    const QByteArray before = contents(engine.session());
    RunDialog dialog;
    dialog.setPaths(models.target, {models.drafter}, models.prompts, engine.session());
    dialog.setEngine({}, engine.writeScript(dir.filePath(QStringLiteral("engine.sh"))));
    auto* status = dialog.findChild<QLabel*>(QStringLiteral("runStatus"));
    QSignalSpy finished(dialog.client(), &EngineClient::finished);

    answerNextBox(QStringLiteral("existingSessionBox"), QStringLiteral("Replace..."));
    answerNextBox(QStringLiteral("confirmReplaceBox"), QStringLiteral("Cancel"));
    dialog.startRun();
    QVERIFY(!dialog.client()->running());
    QVERIFY2(status->text().startsWith(QStringLiteral("Not started")), qPrintable(status->text()));
    QCOMPARE(contents(engine.session()), before);

    answerNextBox(QStringLiteral("existingSessionBox"), QStringLiteral("New File"));
    dialog.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    QCOMPARE(dialog.sessionPath(), dir.filePath(QStringLiteral("local-2.dfi")));
    QCOMPARE(session::Reader(dialog.sessionPath().toStdString()).runs().size(), std::size_t{2});
    QCOMPARE(contents(engine.session()), before);

    dialog.setPaths(models.target, {models.drafter}, models.prompts, engine.session());
    answerNextBox(QStringLiteral("existingSessionBox"), QStringLiteral("Append"));
    dialog.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 20000);
    {
      session::Reader reader(engine.session().toStdString());
      const auto runs = reader.runs();
      QCOMPARE(runs.size(), std::size_t{3});
      QCOMPARE(runs.front().name, std::string("earlier"));
    }

    answerNextBox(QStringLiteral("existingSessionBox"), QStringLiteral("Replace..."));
    answerNextBox(QStringLiteral("confirmReplaceBox"), QStringLiteral("Replace"));
    dialog.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, 20000);
    const auto replaced = session::Reader(engine.session().toStdString()).runs();
    QCOMPARE(replaced.size(), std::size_t{2});
    QCOMPARE(replaced.front().runId, session::RunId{7});
  }

  // A model directory that is not there is named before anything starts or is written.
  void theRunDialogChecksLocalPathsFirst() {
    QTemporaryDir dir;
    const FakeModels models(dir);
    RunDialog dialog;
    const QString session = dir.filePath(QStringLiteral("never.dfi"));
    dialog.setPaths(dir.filePath(QStringLiteral("no-target")), {models.drafter}, models.prompts, session);
    dialog.setEngine({}, fakeEngine(dir.filePath(QStringLiteral("bin"))));
    dialog.startRun();
    const QString status = dialog.findChild<QLabel*>(QStringLiteral("runStatus"))->text();
    QVERIFY2(status.contains(QStringLiteral("no-target")) && status.contains(QStringLiteral("does not exist")),
             qPrintable(status));
    QVERIFY(!dialog.client()->running());
    QVERIFY(!QFileInfo::exists(session));
  }

  // An engine error that arrives after the user pressed Cancel is an error, not "cancelled".
  void anErrorAfterACancelIsNotHidden() {
    QTemporaryDir dir;
    const ScriptedEngine engine(dir, {}, recordedRun(),
                                protocol::ErrorReply{.requestId = 1, .message = "CUDA out of memory", .exitCode = 1},
                                ScriptedEngine::Last::AfterCancel);
    EngineClient client;
    QSignalSpy created(&client, &EngineClient::sessionCreated);
    QSignalSpy cancelled(&client, &EngineClient::cancelled);
    QSignalSpy failed(&client, &EngineClient::failed);
    client.start(engine.launch(), {}, engine.session());
    QTRY_COMPARE_WITH_TIMEOUT(created.count(), 1, 20000);
    client.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() + cancelled.count() > 0, 20000);
    QCOMPARE(cancelled.count(), 0);
    QCOMPARE(failed.front().front().toString(), QStringLiteral("CUDA out of memory"));
    QTRY_VERIFY(!client.running());
    QCOMPARE(session::Reader(engine.session().toStdString()).runs().size(), std::size_t{2});
  }

  // Closing the window during a run asks first; stopping keeps what was recorded, as a cancel
  // does, and is no crash.
  void quittingDuringARunAsksAndKeepsTheRecords() {
    QTemporaryDir dir;
    const FakeModels models(dir);
    const ScriptedEngine engine(
        dir, {}, recordedRun(),
        protocol::ErrorReply{.requestId = 1, .message = "evaluation cancelled after 1 of 4 prompt runs", .exitCode = 130},
        ScriptedEngine::Last::AfterCancel);
    MainWindow window;
    window.show();
    RunDialog* dialog = window.runDialog();
    dialog->setPaths(models.target, {models.drafter}, models.prompts, engine.session());
    dialog->setEngine({}, engine.writeScript(dir.filePath(QStringLiteral("engine.sh"))));
    QSignalSpy failed(dialog->client(), &EngineClient::failed);
    QSignalSpy cancelled(dialog->client(), &EngineClient::cancelled);
    dialog->startRun();
    QTRY_COMPARE_WITH_TIMEOUT(window.context()->path(), engine.session(), 20000);

    answerNextBox(QStringLiteral("quitDuringRunBox"), QStringLiteral("Cancel"));
    QVERIFY(!window.close());
    QVERIFY(window.isVisible());
    QVERIFY(dialog->client()->running());

    answerNextBox(QStringLiteral("quitDuringRunBox"), QStringLiteral("Stop and Quit"));
    QVERIFY(window.close());
    QVERIFY(!dialog->client()->running());
    QCOMPARE(failed.count(), 0);
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(session::Reader(engine.session().toStdString()).runs().size(), std::size_t{2});
  }

  // The form says how many prompts the run takes before it starts, under the CLI's --limit.
  void theRunDialogCountsThePromptsItWillTake() {
    QTemporaryDir dir;
    const QString prompts = dir.filePath(QStringLiteral("p.jsonl"));
    QFile file(prompts);
    file.open(QIODevice::WriteOnly);
    file.write("{\"ids\": [1]}\n{\"ids\": [2]}\n\n{\"ids\": [3]}\n{\"ids\": [4]}\n");
    file.close();
    RunDialog dialog;
    dialog.setEngine({}, fakeEngine(dir.filePath(QStringLiteral("bin"))));
    dialog.setPaths(QStringLiteral("t"), {QStringLiteral("d")}, prompts, dir.filePath(QStringLiteral("s.dfi")));
    auto* count = dialog.findChild<QLabel*>(QStringLiteral("promptCount"));
    QCOMPARE(count->text(), QStringLiteral("4 prompts in the file"));
    QVERIFY(!dialog.runSettings().limit);
    dialog.findChild<QSpinBox*>(QStringLiteral("limitField"))->setValue(2);
    QCOMPARE(count->text(), QStringLiteral("2 of the file's 4 prompts"));
    QCOMPARE(dialog.runSettings().limit, std::optional<std::int64_t>(2));
    dialog.setEngine(QStringLiteral("ssh gpu-host"), QStringLiteral("dflash-eval"));
    QVERIFY(count->text().isEmpty());  // the file is on the other machine
    QSettings().clear();
  }

  // The inspect engine crashing mid-request (a segfault, an out-of-memory kill) after part of
  // its answer: the request fails saying how the engine ended, the partial answer is neither
  // reported nor written to the session, and the next request starts a new engine.
  void anInspectEngineThatCrashesIsReportedAndTheNextRequestRuns() {
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("inspected.dfi"));
    session::TensorRecord partial;
    partial.info = {.tensorId = 1, .runId = 7, .stepId = 100, .name = "drafter.layer0.attention",
                    .dtype = session::TensorDType::U8, .shape = {1}};
    partial.data = {1};
    const ScriptedEngine crashing(dir, {}, {protocol::encodeRecord(partial)},
                                  protocol::Done{.requestId = 1, .request = protocol::RequestKind::Inspect},
                                  ScriptedEngine::Last::ExitInstead);
    InspectClient client;
    QSignalSpy failed(&client, &InspectClient::failed);
    QSignalSpy answered(&client, &InspectClient::answered);
    protocol::InspectRequest request;
    request.runId = 7;
    request.stepId = 100;
    client.setLaunch(crashing.launch());
    client.inspect(request, session);
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 20000);
    const QString message = failed.front().front().toString();
    QVERIFY2(message.contains(QStringLiteral("exited with code 3 during the inspect request")), qPrintable(message));
    QCOMPARE(answered.count(), 0);
    QVERIFY(!client.busy());
    QVERIFY2(!QFile::exists(session), "a crashed engine's partial answer was written");

    QTemporaryDir again;
    const ScriptedEngine refusing(again, {}, {},
                                  protocol::ErrorReply{.requestId = 2, .message = "no step 100 in run 7", .exitCode = 3});
    client.setLaunch(refusing.launch());
    client.inspect(request, session);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 20000);
    QCOMPARE(failed.back().front().toString(), QStringLiteral("no step 100 in run 7"));
  }

  // An engine that dies before its done (exits, or stops inside a frame) is a message naming how
  // it ended; what it recorded is kept, and the client starts a next run.
  void anEngineThatDiesMidRunKeepsWhatItRecorded() {
    for (bool midFrame : {false, true}) {
      QTemporaryDir dir;
      const ScriptedEngine dying(dir, {}, recordedRun(), done(), ScriptedEngine::Last::ExitInstead);
      if (midFrame) dying.truncate(5);  // the last step's frame, cut short
      EngineClient client;
      QSignalSpy failed(&client, &EngineClient::failed);
      QSignalSpy finished(&client, &EngineClient::finished);
      client.start(dying.launch(), {}, dying.session());
      QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 20000);
      const QString message = failed.front().front().toString();
      QVERIFY2(message.contains(QStringLiteral("exited with code 3")) &&
                   message.contains(QStringLiteral("what it recorded is kept in ") + dying.session()),
               qPrintable(message));
      QCOMPARE(message.contains(QStringLiteral("in the middle of a frame")), midFrame);
      {
        session::Reader reader(dying.session().toStdString());
        QCOMPARE(reader.runs().size(), std::size_t{2});
        QCOMPARE(reader.stepCount(9), midFrame ? 0 : 1);  // run 9's one step is the stream's last frame
        QCOMPARE(reader.stepCount(7), 2);
      }
      QTRY_VERIFY(!client.running());
      QTemporaryDir again;
      const ScriptedEngine next(again, {}, recordedRun(), done());
      client.start(next.launch(), {}, next.session());
      QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
      QCOMPARE(failed.count(), 1);
    }
  }
};

QTEST_MAIN(TestEngineClient)
#include "test_engine_client.moc"
