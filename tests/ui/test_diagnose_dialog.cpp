// File > Diagnose: the Run dialog's shared form as a diagnosis, sent to `dflash-eval serve` as
// a "diagnose" request. The request the form builds is what the engine decodes (every field
// through the protocol's own encoder and decoder); a diagnosis of the bundled demo's good
// drafter runs through the real engine into a local session that the Diagnosis panel follows
// until it holds the baseline and every measured hypothesis, as readDiagnoses reads the file;
// an engine error is a message; a cancel in the middle of the battery ends cleanly and keeps
// the hypotheses measured so far.

#include <QCheckBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include "engine/engine_client.h"
#include "session/session_context.h"
#include "dfi/analysis/diagnosis.h"
#include "dfi/protocol/frame.h"
#include "dfi/session/reader.h"
#include "panels/diagnosis_view.h"
#include "windows/main_window.h"
#include "windows/run_dialog.h"

using dfi::ui::RunDialog;

namespace {

const QString kDemo = QStringLiteral(DFI_SOURCE_DIR "/resources/demo");

// The demo's first prompt alone, so that a whole battery takes seconds.
QString writeOnePrompt(const QTemporaryDir& dir) {
  QFile demo(kDemo + "/prompts.jsonl");
  demo.open(QIODevice::ReadOnly);
  const QString path = dir.filePath(QStringLiteral("one_prompt.jsonl"));
  QFile file(path);
  file.open(QIODevice::WriteOnly);
  file.write(demo.readLine());
  return path;
}

void fillDemoForm(RunDialog& dialog, const QTemporaryDir& dir, const QString& session) {
  dialog.setPaths(kDemo + "/target", {kDemo + "/drafter-good"}, writeOnePrompt(dir), session);
  dialog.setEngine({}, QStringLiteral(DFLASH_EVAL));
  dialog.findChild<QSpinBox*>(QStringLiteral("maxNewTokensField"))->setValue(8);
}

// The diagnoses of a finished session file, as the CLI's report reads them.
std::vector<dfi::analysis::Diagnosis> diagnosesIn(const QString& session) {
  dfi::session::Reader reader(session.toStdString());
  return dfi::analysis::readDiagnoses(reader.runs(), [&](dfi::session::RunId run, const auto& visit) {
    reader.forEachStepSummary(run, visit);
  });
}

int measured(const dfi::analysis::Diagnosis& diagnosis) {
  return static_cast<int>(std::ranges::count_if(diagnosis.hypotheses, &dfi::analysis::HypothesisResult::measured));
}

bool rowShown(const RunDialog& dialog, const char* fieldName) {
  const auto* field = dialog.findChild<QWidget*>(QString::fromLatin1(fieldName));
  return field && field->isVisibleTo(&dialog);
}

}  // namespace

class TestDiagnoseDialog : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { QSettings().clear(); }

  // The form's fields arrive in the engine as the diagnose request's: encoded and decoded by the
  // protocol, the request is a DiagnoseRequest with the form's target, drafters, prompts,
  // device, dtype, max new tokens, training dump and budget; empty optional fields stay unset.
  void theRequestIsWhatTheEngineDecodes() {
    RunDialog dialog(nullptr, RunDialog::Kind::Diagnosis);
    dialog.setPaths(QStringLiteral("/models/target"), {QStringLiteral("/models/a"), QStringLiteral(" /models/b ")},
                    QStringLiteral("/data/prompts.jsonl"), QStringLiteral("/tmp/d.dfi"));
    dialog.findChild<QSpinBox*>(QStringLiteral("maxNewTokensField"))->setValue(64);
    dialog.findChild<QLineEdit*>(QStringLiteral("trainingDumpField"))->setText(QStringLiteral(" /dumps/hidden.safetensors"));
    dialog.findChild<QLineEdit*>(QStringLiteral("trainingTemplateField"))->setText(QStringLiteral("/train/chat.jinja "));
    dialog.findChild<QLineEdit*>(QStringLiteral("chatTemplateKwargsField"))->setText(QStringLiteral(R"({"enable_thinking": false})"));
    dialog.findChild<QDoubleSpinBox*>(QStringLiteral("budgetMinutesField"))->setValue(2.5);
    dfi::protocol::DiagnoseRequest request{dialog.diagnoseSettings()};
    request.requestId = 7;
    const auto decoded = dfi::protocol::decodeRequest(dfi::protocol::encodeMessage(request), "test");
    QVERIFY(std::holds_alternative<dfi::protocol::DiagnoseRequest>(decoded));
    const auto& d = std::get<dfi::protocol::DiagnoseRequest>(decoded);
    QCOMPARE(d, request);
    QCOMPARE(d.requestId, 7u);
    QCOMPARE(d.evaluation.target, std::filesystem::path("/models/target"));
    QCOMPARE(d.evaluation.drafters, (std::vector<std::filesystem::path>{"/models/a", "/models/b"}));
    QCOMPARE(d.evaluation.prompts, std::filesystem::path("/data/prompts.jsonl"));
    QCOMPARE(d.evaluation.model.devices, std::vector<std::string>{"cpu"});
    QCOMPARE(d.evaluation.model.dtype, std::string("fp32"));
    QCOMPARE(d.evaluation.maxNewTokens, 64);
    QCOMPARE(d.trainingDump, std::optional<std::filesystem::path>("/dumps/hidden.safetensors"));
    QCOMPARE(d.trainingTemplate, std::optional<std::filesystem::path>("/train/chat.jinja"));
    QCOMPARE(d.evaluation.chatTemplateKwargs, std::string(R"({"enable_thinking": false})"));
    QCOMPARE(d.budgetMinutes, std::optional<double>(2.5));
    QVERIFY(!d.session);  // the GUI writes its own copy from the stream

    dialog.findChild<QLineEdit*>(QStringLiteral("trainingDumpField"))->clear();
    dialog.findChild<QLineEdit*>(QStringLiteral("trainingTemplateField"))->clear();
    dialog.findChild<QDoubleSpinBox*>(QStringLiteral("budgetMinutesField"))->setValue(0);
    const auto unset = std::get<dfi::protocol::DiagnoseRequest>(
        dfi::protocol::decodeRequest(dfi::protocol::encodeMessage(dfi::protocol::DiagnoseRequest{dialog.diagnoseSettings()}), "test"));
    QVERIFY(!unset.trainingDump);
    QVERIFY(!unset.trainingTemplate);
    QVERIFY(!unset.budgetMinutes);
  }

  // Each kind shows the rows its request reads.
  void eachKindShowsItsOwnRows() {
    RunDialog diagnose(nullptr, RunDialog::Kind::Diagnosis);
    RunDialog evaluate(nullptr, RunDialog::Kind::Evaluation);
    for (const char* shared : {"targetField", "draftersField", "promptsField", "sessionField", "prefixField",
                               "engineField", "maxNewTokensField", "chatTemplateKwargsField"}) {
      QVERIFY2(rowShown(diagnose, shared), shared);
      QVERIFY2(rowShown(evaluate, shared), shared);
    }
    for (const char* own : {"trainingDumpField", "trainingTemplateField", "budgetMinutesField"}) {
      QVERIFY2(rowShown(diagnose, own), own);
      QVERIFY2(!rowShown(evaluate, own), own);
    }
    for (const char* own : {"temperatureField", "samplesField"}) {
      QVERIFY2(!rowShown(diagnose, own), own);
      QVERIFY2(rowShown(evaluate, own), own);
    }
    for (QCheckBox* box : diagnose.findChildren<QCheckBox*>()) QVERIFY2(!box->isVisibleTo(&diagnose), qPrintable(box->text()));
    QCOMPARE(diagnose.findChild<QPushButton*>(QStringLiteral("startButton"))->text(), QStringLiteral("Diagnose"));
  }

  // A first diagnosis starts from the last evaluation's paths, not its session file.
  void aDiagnosisStartsFromTheLastEvaluationsPaths() {
    QSettings().setValue(QStringLiteral("run/target"), QStringLiteral("/models/t"));
    QSettings().setValue(QStringLiteral("run/session"), QStringLiteral("/tmp/evaluation.dfi"));
    RunDialog dialog(nullptr, RunDialog::Kind::Diagnosis);
    QCOMPARE(dialog.runSettings().target, std::filesystem::path("/models/t"));
    QVERIFY(dialog.findChild<QLineEdit*>(QStringLiteral("sessionField"))->text().isEmpty());
  }

  // File > Diagnose on the demo: the window opens the local session on the Diagnosis panel and
  // follows it; when the engine is done the panel holds what readDiagnoses reads from the file.
  void theDiagnosisPanelFillsInFromTheEngine() {
    QTemporaryDir dir;
    dfi::ui::MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QString session = dir.filePath(QStringLiteral("diagnosis.dfi"));
    RunDialog* dialog = window.diagnoseDialog();
    QCOMPARE(dialog->kind(), RunDialog::Kind::Diagnosis);
    fillDemoForm(*dialog, dir, session);
    dfi::ui::DiagnosisView* view = window.diagnosisView();
    QSignalSpy computed(view, &dfi::ui::DiagnosisView::computed);
    QSignalSpy progress(dialog->client(), &dfi::ui::EngineClient::progress);
    QSignalSpy finished(dialog->client(), &dfi::ui::EngineClient::finished);
    QSignalSpy failed(dialog->client(), &dfi::ui::EngineClient::failed);
    dialog->startRun();
    QTRY_COMPARE_WITH_TIMEOUT(window.context()->path(), session, 240000);  // from its first record
    QVERIFY(window.context()->isFollowing());
    QTRY_VERIFY(view->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 240000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
    // Phase 1 (the baseline's prompt) and phase 2 (each hypothesis on it) both reported.
    QVERIFY(progress.count() >= 2);
    QVERIFY(std::ranges::any_of(progress, [](const QList<QVariant>& p) {
      return p.at(3).toString().startsWith(QStringLiteral("drafter-good: prompt"));
    }));
    QVERIFY(std::ranges::any_of(progress, [](const QList<QVariant>& p) {
      return p.at(3).toString().contains(QStringLiteral(", prompt"));
    }));

    const auto expected = diagnosesIn(session);
    QCOMPARE(static_cast<int>(expected.size()), 1);
    QVERIFY(measured(expected.front()) >= 10);
    QVERIFY(finished.front().front().toString().contains(
        QStringLiteral("%1 of %1 hypothesis runs").arg(measured(expected.front()))));
    // The panel follows the file until it shows the whole diagnosis.
    QTRY_VERIFY_WITH_TIMEOUT(!view->isComputing() && !view->isStale() && view->diagnoses().size() == 1 &&
                                 measured(view->diagnoses().front()) == measured(expected.front()),
                             60000);
    const auto& shown = view->diagnoses().front();
    QCOMPARE(shown.baseline, expected.front().baseline);
    QCOMPARE(shown.drafter, std::string("drafter-good"));
    for (std::size_t i = 0; i < shown.hypotheses.size(); ++i) {
      QCOMPARE(shown.hypotheses[i].planned.name, expected.front().hypotheses[i].planned.name);
      QCOMPARE(shown.hypotheses[i].run, expected.front().hypotheses[i].run);
    }
    QVERIFY(computed.count() >= 1);
    qInfo("the panel computed %d times while following; %d hypotheses measured", static_cast<int>(computed.count()),
          measured(shown));
  }

  // The engine (behind a command prefix, as on a remote host, so the form cannot check the
  // paths itself) refuses a drafter directory that is not one before any compute: a message,
  // no crash, no session file.
  void anEngineErrorIsReported() {
    QTemporaryDir dir;
    RunDialog dialog(nullptr, RunDialog::Kind::Diagnosis);
    dialog.setPaths(kDemo + "/target", {dir.path()}, writeOnePrompt(dir), dir.filePath(QStringLiteral("refused.dfi")));
    dialog.setEngine(QStringLiteral("env"), QStringLiteral(DFLASH_EVAL));
    QSignalSpy failed(&dialog, &RunDialog::engineFailed);
    dialog.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QVERIFY2(failed.front().front().toString().contains(QStringLiteral("config.json")),
             qPrintable(failed.front().front().toString()));
    QVERIFY(dialog.findChild<QPushButton*>(QStringLiteral("startButton"))->isEnabled());
    QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("refused.dfi"))));
  }

  // Cancel once the battery is under way: the engine stops, the dialog says so, and the file
  // keeps the baseline and the hypotheses measured before the cancel (fewer than all of them).
  void aCancelKeepsTheMeasuredHypotheses() {
    QTemporaryDir dir;
    RunDialog dialog(nullptr, RunDialog::Kind::Diagnosis);
    const QString session = dir.filePath(QStringLiteral("cancelled.dfi"));
    fillDemoForm(dialog, dir, session);
    QSignalSpy cancelled(dialog.client(), &dfi::ui::EngineClient::cancelled);
    QSignalSpy finished(dialog.client(), &dfi::ui::EngineClient::finished);
    QSignalSpy failed(dialog.client(), &dfi::ui::EngineClient::failed);
    // The first hypothesis reported in phase 2: cancel with the cancel button.
    connect(dialog.client(), &dfi::ui::EngineClient::progress, &dialog,
            [&dialog](qint64, qint64, double, const QString& current) {
              if (current.contains(QStringLiteral(", prompt")))
                dialog.findChild<QPushButton*>(QStringLiteral("cancelButton"))->click();
            });
    dialog.startRun();
    QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() + finished.count() + failed.count() > 0, 240000);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(finished.count(), 0);
    QCOMPARE(cancelled.count(), 1);
    QTRY_VERIFY(!dialog.client()->running());
    QVERIFY(dialog.findChild<QPushButton*>(QStringLiteral("startButton"))->isEnabled());
    QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("runStatus"))->text().startsWith(QStringLiteral("Cancelled")));

    const auto kept = diagnosesIn(session);
    QCOMPARE(static_cast<int>(kept.size()), 1);
    QVERIFY(kept.front().baselineTau.estimate > 0);
    const int applicable = static_cast<int>(std::ranges::count_if(
        kept.front().hypotheses, [](const dfi::analysis::HypothesisResult& h) { return h.planned.applicable; }));
    qInfo("cancelled with %d of %d applicable hypotheses measured", measured(kept.front()), applicable);
    QVERIFY2(measured(kept.front()) >= 1 && measured(kept.front()) < applicable,
             qPrintable(QStringLiteral("%1 of %2 measured").arg(measured(kept.front())).arg(applicable)));
  }
};

QTEST_MAIN(TestDiagnoseDialog)
#include "test_diagnose_dialog.moc"
