// The run dialog drives a real `dflash-eval serve` child process: records stream back into a
// local session, progress and the tau summary arrive, and a failing or missing engine ends in
// a message while the GUI stays up.

#include <QDir>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSettings>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "engine/engine_client.h"
#include "session/session_context.h"
#include "windows/main_window.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "windows/run_dialog.h"

namespace {

const QString kLive = QStringLiteral(DFI_BINARY_DIR "/tests/oracle/drafter/live");

QString writePrompts(const QTemporaryDir& dir) {
  const QString path = dir.filePath(QStringLiteral("prompts.jsonl"));
  QFile file(path);
  file.open(QIODevice::WriteOnly);
  file.write("{\"ids\": [1, 4, 2, 7, 3]}\n{\"ids\": [9, 9, 0, 5]}\n");
  return path;
}

}  // namespace

class TestRunDialog : public QObject {
  Q_OBJECT
 private slots:
  // The form is remembered in QSettings (a test location): emptied before each test, so that
  // no earlier test's form (a sampled one, say) leaks into the next.
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { QSettings().clear(); }

  void runsTheEngineIntoALocalSession() {
    QTemporaryDir dir;
    dfi::ui::RunDialog dialog;
    const QString session = dir.filePath(QStringLiteral("run.dfi"));
    dialog.setPaths(kLive + "/target", {kLive + "/drafter"}, writePrompts(dir), session);
    dialog.setEngine({}, QStringLiteral(DFLASH_EVAL));
    QSignalSpy started(&dialog, &dfi::ui::RunDialog::sessionStarted);
    QSignalSpy progress(dialog.client(), &dfi::ui::EngineClient::progress);
    QSignalSpy finished(dialog.client(), &dfi::ui::EngineClient::finished);
    QSignalSpy failed(dialog.client(), &dfi::ui::EngineClient::failed);
    dialog.startRun();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 240000);
    QCOMPARE(started.count(), 1);  // once the first record arrived
    QCOMPARE(failed.count(), 0);
    // The loading's stages come first (nothing done yet), then one frame per prompt.
    QStringList stages;
    int promptsDone = 0;
    for (const QList<QVariant>& frame : progress) {
      if (frame[0].toLongLong() == 0) stages << frame[3].toString();
      else ++promptsDone;
    }
    QCOMPARE(promptsDone, 2);
    QVERIFY2(stages.size() == 3 && stages[1].startsWith(QStringLiteral("loading the target ")) &&
                 stages[2] == QStringLiteral("loading drafter 1 of 1: drafter"),
             qPrintable(stages.join('\n')));
    // The CLI's summary table: the live reference run's row (drafter, mode, mask, ...).
    const QString table = finished.front().front().toString();
    QVERIFY2(table.contains(QRegularExpression(QStringLiteral("^drafter +live +reference +"),
                                               QRegularExpression::MultilineOption)),
             qPrintable(table));

    // What the engine streamed is now a complete local session, under the engine's ids.
    dfi::session::Reader reader(session.toStdString());
    const auto runs = reader.runs();
    QCOMPARE(static_cast<int>(runs.size()), 5);  // live + 2 variants x (teacher-forced, ddtree)
    for (const auto& run : runs) {
      QVERIFY(run.finishedAt > 0);
      QCOMPARE(static_cast<int>(reader.prompts(run.runId).size()), 2);
      QVERIFY(reader.stepCount(run.runId) > 0);
    }
    bool sawTree = false;
    for (const auto& run : runs)
      if (run.name.find("/ddtree/") != std::string::npos)
        reader.forEachStep(run.runId, [&](const dfi::session::StepRecord& step) {
          sawTree = sawTree || reader.tree(step.stepId).has_value();
        });
    QVERIFY(sawTree);
  }

  // A sampled evaluation from the form: two repeats at T = 1, every live step with its
  // acceptance test's p, q and u recorded.
  void runsASampledEvaluation() {
    QTemporaryDir dir;
    dfi::ui::RunDialog dialog;
    const QString session = dir.filePath(QStringLiteral("sampled.dfi"));
    dialog.setPaths(kLive + "/target", {kLive + "/drafter"}, writePrompts(dir), session);
    dialog.setEngine({}, QStringLiteral(DFLASH_EVAL));
    dialog.findChild<QDoubleSpinBox*>(QStringLiteral("temperatureField"))->setValue(1.0);
    dialog.findChild<QSpinBox*>(QStringLiteral("samplesField"))->setValue(2);
    QSignalSpy finished(dialog.client(), &dfi::ui::EngineClient::finished);
    QSignalSpy failed(dialog.client(), &dfi::ui::EngineClient::failed);
    dialog.startRun();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 240000);
    QCOMPARE(failed.count(), 0);
    dfi::session::Reader reader(session.toStdString());
    int liveRuns = 0, sampledSteps = 0;
    for (const auto& run : reader.runs()) {
      QCOMPARE(run.temperature, 1.0);
      if (run.mode != dfi::session::EvaluationMode::Live) continue;
      QCOMPARE(run.sample, liveRuns++);
      reader.forEachStep(run.runId, [&](const dfi::session::StepRecord& step) {
        sampledSteps += step.acceptUniforms.size() == step.draftTokens.size() && !step.draftTokens.empty() ? 1 : 0;
      });
    }
    QCOMPARE(liveRuns, 2);
    QVERIFY(sampledSteps > 0);
  }

  // File > Run Evaluation: the window opens the local session as soon as the engine records
  // into it and follows it, so the runs are there when the engine is done.
  void theMainWindowFollowsTheRunsSession() {
    QTemporaryDir dir;
    dfi::ui::MainWindow window;
    window.show();
    const QString session = dir.filePath(QStringLiteral("live.dfi"));
    dfi::ui::RunDialog* dialog = window.runDialog();
    dialog->setPaths(kLive + "/target", {kLive + "/drafter"}, writePrompts(dir), session);
    dialog->setEngine({}, QStringLiteral(DFLASH_EVAL));
    QSignalSpy finished(dialog->client(), &dfi::ui::EngineClient::finished);
    dialog->startRun();
    QTRY_COMPARE_WITH_TIMEOUT(window.context()->path(), session, 240000);
    QVERIFY(window.context()->isFollowing());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
    window.context()->poll();
    QCOMPARE(static_cast<int>(window.context()->runs().size()), 5);
  }

  void aMissingEngineIsAMessageNotACrash() {
    QTemporaryDir dir;
    dfi::ui::RunDialog dialog;
    dialog.setPaths(kLive + "/target", {kLive + "/drafter"}, writePrompts(dir), dir.filePath(QStringLiteral("x.dfi")));
    dialog.setEngine({}, dir.filePath(QStringLiteral("no-such-engine")));
    QSignalSpy failed(dialog.client(), &dfi::ui::EngineClient::failed);
    dialog.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
    QVERIFY(failed.front().front().toString().contains(QStringLiteral("could not start")));
  }

  // A drafter directory that is not one. With the engine here the dialog names it before
  // starting; behind a command prefix (as on a remote host, here `env`) the engine refuses it
  // before any compute, and neither the session open in the window nor the session file named
  // is touched.
  void anEngineErrorIsReported() {
    QTemporaryDir dir;
    dfi::ui::MainWindow window;
    const QString open = dir.filePath(QStringLiteral("open.dfi"));
    {
      dfi::session::Writer writer(open.toStdString(), {.mode = dfi::session::OpenMode::CreateNew});
      writer.addRun({.name = "earlier", .blockSize = 16});
    }
    QVERIFY(window.openFile(open));
    dfi::ui::RunDialog* dialog = window.runDialog();
    const QString session = dir.filePath(QStringLiteral("y.dfi"));
    dialog->setPaths(kLive + "/target", {dir.path()}, writePrompts(dir), session);
    dialog->setEngine({}, QStringLiteral(DFLASH_EVAL));
    dialog->startRun();
    const QString status = dialog->findChild<QLabel*>(QStringLiteral("runStatus"))->text();
    QVERIFY2(status.contains(QStringLiteral("config.json")), qPrintable(status));
    QVERIFY(!dialog->client()->running());

    dialog->setEngine(QStringLiteral("env"), QStringLiteral(DFLASH_EVAL));
    QSignalSpy failed(dialog->client(), &dfi::ui::EngineClient::failed);
    dialog->startRun();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QVERIFY2(failed.front().front().toString().contains(QStringLiteral("config.json")),
             qPrintable(failed.front().front().toString()));
    QVERIFY(!QFileInfo::exists(session));
    QCOMPARE(window.context()->path(), open);
  }
};

QTEST_MAIN(TestRunDialog)
#include "test_run_dialog.moc"
