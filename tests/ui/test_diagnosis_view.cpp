// The Diagnosis panel on a diagnosis written with the session Writer as `dflash-eval diagnose`
// records one: a baseline whose settings hold the plan (lint findings, a battery with a
// hypothesis that does not apply and one the diagnosis never reached), and three hypothesis
// runs teacher-forced at the baseline's anchors: one better everywhere (interval above zero),
// one worse, one mixed; a second drafter's diagnosis beside it. The panel must show what
// readDiagnoses says, in its order; clicking a hypothesis opens the compare view on the
// baseline and that run with the block that changed most chosen; clicking a block selects it
// and brings forward the panel for its kind of hypothesis; a diagnosis being written is followed;
// `render --view diagnosis` draws it. Screenshots:
// <build>/screenshots/diagnosis_*.png.

#include <QComboBox>
#include <QDockWidget>
#include <QImage>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QTreeWidget>
#include <QtTest>

#include "session/file_session_source.h"
#include "session/session_context.h"
#include "dfi/analysis/diagnosis.h"
#include "gui_test_support.h"
#include "models/block_regression_model.h"
#include "models/diagnosis_model.h"
#include "models/mask_layout.h"
#include "session_fixture.h"
#include "widgets/interval_bar_delegate.h"
#include "panels/compare_view.h"
#include "panels/diagnosis_view.h"
#include "panels/overview_view.h"
#include "windows/main_window.h"
#include "panels/mask_controls.h"
#include "panels/mask_view.h"
#include "windows/render.h"
#include "panels/stats_view.h"

using namespace dfi::ui;
using dfi::analysis::LintSeverity;
using dfi::session::RunId;
using Row = DiagnosisModel::RowState;

namespace {

constexpr int kPrompts = 8;
constexpr int kSteps = 7;  // not a multiple of the baseline's period: prompts differ
constexpr int kBlockSize = 8;

// The baseline's accepted drafts at a block; each hypothesis moves them its own way.
int baselineAccepted(int prompt, int step) { return (prompt * 3 + step * 5) % 6; }

int acceptedUnder(const std::string& hypothesis, int prompt, int step) {
  const int a = baselineAccepted(prompt, step);
  if (hypothesis == "taps-shift:-1") return std::min(kBlockSize - 1, a + 1 + (prompt + step) % 2);  // better everywhere
  if (hypothesis == "mask:anchor-visible") return a / 2;                                            // worse
  if (hypothesis == "tap-noise:0.1") return prompt % 2 == 0 ? a + 1 : std::max(a - 1, 0);  // mixed: a wash
  return a;
}

// A teacher-forced run of a diagnosis of `drafter` with every prompt's steps at the same
// anchors (the baseline's); its tokens consistent with its accepted counts.
RunId writeRun(dfi::session::Writer& writer, const std::string& drafter, const std::string& hypothesis,
               const std::string& settings) {
  dfi::session::RunRecord run;
  run.name = drafter + "/diagnose/" + hypothesis;
  run.mode = dfi::session::EvaluationMode::TeacherForced;
  run.maskVariant = hypothesis == "mask:anchor-visible" ? dfi::session::MaskVariant::AnchorVisible
                                                        : dfi::session::MaskVariant::Reference;
  run.blockSize = kBlockSize;
  run.topK = 4;
  run.device = "cpu";
  run.dtype = "float32";
  run.drafter.path = "/models/" + drafter;
  run.target.path = "/models/target";
  run.hypothesis = hypothesis;
  run.settingsJson = settings;
  const RunId id = writer.addRun(run);
  for (int p = 0; p < kPrompts; ++p) {
    dfi::session::PromptRecord prompt;
    prompt.runId = id;
    prompt.promptId = p;
    prompt.dataset = "gsm8k";
    prompt.text = "Question " + std::to_string(p);
    prompt.promptTokens = dfi::fixture::fixturePromptTokens(p);
    writer.addPrompt(prompt);
    auto anchor = static_cast<std::int64_t>(prompt.promptTokens.size());
    for (int s = 0; s < kSteps; ++s) {
      dfi::session::StepRecord step = dfi::fixture::fixtureStep(0, p, s, anchor, kBlockSize - 1, run.topK);
      step.runId = id;
      step.mode = run.mode;
      step.maskVariant = hypothesis == "mask:anchor-visible" ? "anchor-visible" : "reference";
      step.acceptedCount = acceptedUnder(hypothesis, p, s);
      for (int i = 0; i < kBlockSize - 1; ++i) {
        const auto slot = static_cast<std::size_t>(i);
        step.draftTokens[slot] = i < step.acceptedCount ? step.targetTokens[slot]
                                                        : (step.targetTokens[slot] + 1 + i) % (dfi::fixture::kVocabulary - 1);
      }
      step.bonusToken = dfi::fixture::trueToken(anchor + step.acceptedCount + 1);
      writer.addStep(step);
      anchor += baselineAccepted(p, s) + 1;  // teacher-forced: the baseline's live anchors
    }
  }
  return id;
}

dfi::analysis::DiagnosisPlan planOf(const std::vector<std::string>& measured) {
  dfi::analysis::DiagnosisPlan plan;
  plan.lint = {{LintSeverity::Error, "mask-token-in-text", "drafter/config.json: dflash_config.mask_token_id",
                "mask_token_id 13 is a token real text produces ('\\n'); set it to an id the tokenizer never emits"},
               {LintSeverity::Warning, "tap-is-last-layer", "drafter/config.json: dflash_config.target_layer_ids",
                "target layer 27 is the last layer the target predicts from: the drafter can learn a shortcut"},
               {LintSeverity::Info, "thinking-unnamed", "--prompts", "the thinking setting was not named; assumed off"}};
  for (const std::string& name : measured) plan.battery.push_back({name, "variant " + name, true, ""});
  plan.battery.push_back({"window:full", "the sliding-window layers as full attention", false,
                          "the drafter has no sliding-window layers"});
  plan.battery.push_back({"gdn:recurrent", "the target's DeltaNet layers in the recurrent form", true, ""});
  return plan;
}

// Two diagnoses: drafter-x (three measured, one not applicable, one not reached), then
// drafter-y (one measured).
void writeDiagnosisFile(const QString& path) {
  dfi::session::Writer writer(path.toStdString(), {.mode = dfi::session::OpenMode::Overwrite});
  writer.addTokenStrings(dfi::fixture::fixtureTokenStrings());
  const std::vector<std::string> battery{"taps-shift:-1", "mask:anchor-visible", "tap-noise:0.1"};
  writeRun(writer, "drafter-x", "baseline", dfi::analysis::withDiagnosisPlan("{}", planOf(battery)));
  for (const std::string& h : battery) writeRun(writer, "drafter-x", h, "{}");
  writeRun(writer, "drafter-y", "baseline", dfi::analysis::withDiagnosisPlan("{}", planOf({"tap-noise:0.1"})));
  writeRun(writer, "drafter-y", "tap-noise:0.1", "{}");
  writer.close();
}

std::vector<dfi::analysis::Diagnosis> readBack(const QString& path) {
  FileSessionSource source(path.toStdString());
  return dfi::analysis::readDiagnoses(source.runs(), [&](RunId run, const auto& visit) { source.forEachStepSummary(run, visit); });
}

QString signedFixed(double value) { return (value > 0 ? QStringLiteral("+") : QString()) + QString::number(value, 'f', 2); }

bool inFront(const QWidget* panel) { return panel->isVisible() && !panel->visibleRegion().isEmpty(); }

}  // namespace

class TestDiagnosisView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;

  static void click(QTreeView* tree, const QModelIndex& index) {
    tree->scrollTo(index);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(index).center());
  }

  static QModelIndex rowNamed(const DiagnosisModel& model, const QString& name) {
    for (int r = 0; r < model.rowCount(); ++r)
      if (model.index(r, DiagnosisModel::NameColumn).data().toString() == name) return model.index(r, 0);
    return {};
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("diag.dfi"));
    writeDiagnosisFile(path_);
  }

  // The fixture is what it claims: readDiagnoses finds one candidate cause, one hypothesis
  // worse beyond noise, one within noise, and lists the unmeasured ones.
  void fixtureHasACandidateCause() {
    const auto diagnoses = readBack(path_);
    QCOMPARE(diagnoses.size(), std::size_t{2});
    const auto& h = diagnoses[0].hypotheses;
    QCOMPARE(h.size(), std::size_t{5});
    QCOMPARE(h[0].planned.name, std::string("taps-shift:-1"));
    QVERIFY(h[0].candidateCause());
    QCOMPARE(h[1].planned.name, std::string("tap-noise:0.1"));
    QVERIFY(h[1].deltaTau.low < 0 && h[1].deltaTau.high > 0);
    QCOMPARE(h[2].planned.name, std::string("mask:anchor-visible"));
    QVERIFY(h[2].deltaTau.high < 0);
    QVERIFY(!h[3].measured() && h[3].planned.applicable);   // gdn:recurrent, never reached
    QVERIFY(!h[4].planned.applicable);                      // window:full
    QVERIFY(!h[0].gains.empty() && h[0].losses.empty());
    QVERIFY(!h[2].losses.empty());
  }

  // Rows, order and numbers as readDiagnoses gives them; the lint at the top; the selector
  // between the two drafters.
  void panelShowsWhatTheAnalysisReads() {
    const auto expected = readBack(path_);
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    DiagnosisView view(&context);
    view.resize(1280, 720);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy computed(&view, &DiagnosisView::computed);
    QVERIFY(context.open(path_));
    QVERIFY(computed.wait(20000));

    QCOMPARE(view.selector()->count(), 2);
    QVERIFY(view.selector()->isEnabled());
    QCOMPARE(view.selector()->currentText(), QStringLiteral("drafter-x (baseline: run %1)").arg(expected[0].baseline));
    QVERIFY(view.hint().isEmpty());
    const dfi::analysis::Diagnosis& d = expected[0];
    QVERIFY2(view.summary().contains(QStringLiteral("%1</b>, 95% interval [%2, %3]")
                                         .arg(d.baselineTau.estimate, 0, 'f', 2)
                                         .arg(d.baselineTau.low, 0, 'f', 2)
                                         .arg(d.baselineTau.high, 0, 'f', 2)),
             qPrintable(view.summary()));
    QVERIFY(view.summary().contains(QStringLiteral("<b>taps-shift:-1</b>")));
    QVERIFY(view.summary().contains(QStringLiteral("1 not applicable")));

    // Lint findings: severity, code, subject, message, in the plan's order.
    QTreeWidget* lint = view.lintList();
    QVERIFY(lint->isVisibleTo(&view));
    QCOMPARE(lint->topLevelItemCount(), 3);
    for (int i = 0; i < 3; ++i) {
      const auto& f = d.lint[static_cast<std::size_t>(i)];
      const QTreeWidgetItem* item = lint->topLevelItem(i);
      QCOMPARE(item->text(0), QString::fromUtf8(dfi::analysis::lintSeverityName(f.severity).data()));
      QVERIFY(!item->icon(0).isNull());
      QCOMPARE(item->text(1), QString::fromStdString(f.code));
      QCOMPARE(item->text(2), QString::fromStdString(f.subject));
      QCOMPARE(item->text(3), QString::fromStdString(f.message));
    }

    // Hypotheses in readDiagnoses' order, with its numbers; candidates marked; unmeasured ones
    // listed greyed with their reason.
    DiagnosisModel* model = view.model();
    QCOMPARE(model->rowCount(), static_cast<int>(d.hypotheses.size()));
    const QColor grey = view.palette().brush(QPalette::Disabled, QPalette::Text).color();
    for (int r = 0; r < model->rowCount(); ++r) {
      const auto& h = d.hypotheses[static_cast<std::size_t>(r)];
      const auto cell = [&](int column, int role = Qt::DisplayRole) { return model->index(r, column).data(role); };
      QCOMPARE(cell(DiagnosisModel::NameColumn).toString(), QString::fromStdString(h.planned.name));
      if (h.measured()) {
        QCOMPARE(cell(DiagnosisModel::DeltaColumn).toString(),
                 QStringLiteral("%1  [%2, %3]")
                     .arg(signedFixed(h.deltaTau.estimate), signedFixed(h.deltaTau.low), signedFixed(h.deltaTau.high)));
        QCOMPARE(cell(DiagnosisModel::BarColumn, DiagnosisModel::EstimateRole).toDouble(), h.deltaTau.estimate);
        QCOMPARE(cell(DiagnosisModel::BarColumn, DiagnosisModel::LowRole).toDouble(), h.deltaTau.low);
        QCOMPARE(cell(DiagnosisModel::BarColumn, DiagnosisModel::HighRole).toDouble(), h.deltaTau.high);
        QCOMPARE(cell(DiagnosisModel::TauColumn).toString(), QString::number(h.tau.estimate, 'f', 2));
        QCOMPARE(cell(DiagnosisModel::PromptsColumn).toLongLong(), h.pairedPrompts);
        // The bar may take a verdict's colour only over the prompts a verdict needs.
        QCOMPARE(cell(DiagnosisModel::BarColumn, DiagnosisModel::VerdictRole).toBool(),
                 dfi::analysis::verdictPossible(h.pairedPrompts));
        QCOMPARE(cell(0, DiagnosisModel::StateRole).toInt(),
                 static_cast<int>(h.candidateCause() ? Row::Candidate : Row::Measured));
        QCOMPARE(cell(0, Qt::FontRole).value<QFont>().bold(), h.candidateCause());
        // The axis holds every interval and zero.
        QVERIFY(model->headerData(DiagnosisModel::BarColumn, Qt::Horizontal, DiagnosisModel::AxisLowRole).toDouble() <
                std::min(0.0, h.deltaTau.low));
        QVERIFY(model->headerData(DiagnosisModel::BarColumn, Qt::Horizontal, DiagnosisModel::AxisHighRole).toDouble() >
                std::max(0.0, h.deltaTau.high));
      } else {
        QVERIFY(!cell(DiagnosisModel::BarColumn, DiagnosisModel::EstimateRole).isValid());
        QCOMPARE(cell(0, Qt::ForegroundRole).value<QBrush>().color(), grey);
        QCOMPARE(model->rowCount(model->index(r, 0)), 0);
      }
    }
    const QModelIndex notApplicable = rowNamed(*model, QStringLiteral("window:full"));
    QCOMPARE(notApplicable.siblingAtColumn(DiagnosisModel::ChangeColumn).data().toString(),
             QStringLiteral("not applicable: the drafter has no sliding-window layers"));
    QCOMPARE(notApplicable.data(DiagnosisModel::StateRole).toInt(), static_cast<int>(Row::NotApplicable));
    const QModelIndex notMeasured = rowNamed(*model, QStringLiteral("gdn:recurrent"));
    QVERIFY(notMeasured.siblingAtColumn(DiagnosisModel::ChangeColumn).data().toString().startsWith(QStringLiteral("not measured")));

    // The blocks under a hypothesis: its gains, then its losses, largest change first.
    const auto& mixed = d.hypotheses[1];
    const QModelIndex mixedRow = model->index(1, 0);
    const std::size_t gains = std::min<std::size_t>(mixed.gains.size(), DiagnosisModel::kBlocksShown);
    const std::size_t losses = std::min<std::size_t>(mixed.losses.size(), DiagnosisModel::kBlocksShown);
    QVERIFY(gains > 0 && losses > 0);
    QCOMPARE(model->rowCount(mixedRow), static_cast<int>(gains + losses));
    for (int i = 0; i < model->rowCount(mixedRow); ++i) {
      const bool gain = static_cast<std::size_t>(i) < gains;
      const auto& b = gain ? mixed.gains[static_cast<std::size_t>(i)] : mixed.losses[static_cast<std::size_t>(i) - gains];
      const QModelIndex child = model->index(i, 0, mixedRow);
      QCOMPARE(model->block(child).stepB, b.stepB);
      QCOMPARE(child.data().toString(), (gain ? QStringLiteral("gain: prompt %1, step %2") : QStringLiteral("loss: prompt %1, step %2"))
                                            .arg(b.prompt)
                                            .arg(b.stepIndexB));
      const int change = b.acceptB - b.acceptA;
      QVERIFY(gain ? change > 0 : change < 0);
      QCOMPARE(child.siblingAtColumn(DiagnosisModel::ChangeColumn).data().toString(),
               QStringLiteral("%1: acceptance length %2 \u2192 %3, anchor at %4")
                   .arg((change > 0 ? QStringLiteral("+") : QString()) + QString::number(change))
                   .arg(b.acceptA)
                   .arg(b.acceptB)
                   .arg(b.anchor));
    }

    // The candidate's bar is drawn green, right of the zero line.
    view.hypothesisList()->expand(model->index(0, 0));
    const QImage picture = view.grab().toImage();
    const QRect bar = view.hypothesisList()->visualRect(model->index(0, DiagnosisModel::BarColumn));
    const QPoint origin = view.hypothesisList()->viewport()->mapTo(&view, bar.topLeft());
    int green = 0;
    for (int x = 0; x < bar.width(); ++x)
      green += test::similarColour(picture.pixelColor(origin + QPoint(x, bar.height() / 2 - 3)), IntervalBarDelegate::above(), 20);
    QVERIFY2(green > 5, qPrintable(QString::number(green)));
    test::saveScreenshot(&view, QStringLiteral("diagnosis_panel_1280x720"));

    // The other drafter's diagnosis.
    view.selector()->setCurrentIndex(1);
    QCOMPARE(model->rowCount(), static_cast<int>(expected[1].hypotheses.size()));
    QCOMPARE(model->index(0, 0).data().toString(), QStringLiteral("tap-noise:0.1"));
    QVERIFY(view.summary().contains(QStringLiteral("%1</b>, 95% interval").arg(expected[1].baselineTau.estimate, 0, 'f', 2)));
    QCOMPARE(view.selector()->currentText(), QStringLiteral("drafter-y (baseline: run %1)").arg(expected[1].baseline));

    // CSV: one row per hypothesis, the numbers in full.
    const CsvTable csv = view.exportData();
    QCOMPARE(csv.rows.size(), expected[1].hypotheses.size());
    QCOMPARE(csv.rows[0][3], QString::number(expected[1].hypotheses[0].deltaTau.estimate, 'g', 6));
  }

  // In the main window: a diagnosis's session opens on the Diagnosis panel; clicking a
  // hypothesis opens the compare view on it and the baseline with the block that changed most
  // chosen; clicking a block selects it and brings its panel forward.
  // The overview lists the drafters' own runs: a diagnosis's runs are variants of one drafter,
  // read by their diagnosis (as `summary` reads them), never listed or paired with each other.
  void overviewLeavesDiagnosisRunsToTheirPanel() {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    OverviewView* overview = window.overviewView();
    QSignalSpy computed(overview, &OverviewView::computed);
    QVERIFY(window.openFile(path_));
    QVERIFY(computed.wait(20000));
    const QString text = overview->text();
    QVERIFY2(text.contains(QStringLiteral("6 runs of diagnoses are in the Diagnosis panel")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("/diagnose/")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("No evaluation runs.")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("no two drafters or mask variants to compare")), qPrintable(text));
  }

  void clicksOpenTheComparisonAndTheBlocks() {
    const auto expected = readBack(path_);
    const auto& d = expected[0];
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    DiagnosisView* view = window.diagnosisView();
    QSignalSpy computed(view, &DiagnosisView::computed);
    QVERIFY(window.openFile(path_));
    QTRY_VERIFY(inFront(view));
    QVERIFY(computed.wait(20000));
    QTRY_VERIFY(!view->isComputing());
    test::saveScreenshot(&window, QStringLiteral("diagnosis_window_1280x720"));

    // The candidate (hypothesis better): A = its run, B = the baseline; the block chosen is its
    // largest gain, B's (the baseline's) block selected.
    DiagnosisModel* model = view->model();
    const auto& candidate = d.hypotheses[0];
    QSignalSpy chosen(view, &DiagnosisView::comparisonChosen);
    click(view->hypothesisList(), model->index(0, DiagnosisModel::NameColumn));
    QCOMPARE(chosen.size(), 1);
    CompareView* compare = window.compareView();
    QTRY_VERIFY(inFront(compare));
    QCOMPARE(chosen[0][0].toInt(), view->seriesOf(candidate.run));
    QCOMPARE(chosen[0][1].toInt(), view->seriesOf(d.baseline));
    // The compare view's run choosers, told apart by their tooltips.
    QComboBox *runA = nullptr, *runB = nullptr;
    for (QComboBox* box : compare->findChildren<QComboBox*>()) {
      if (box->toolTip().startsWith(QStringLiteral("Run A"))) runA = box;
      if (box->toolTip().startsWith(QStringLiteral("Run B"))) runB = box;
    }
    QVERIFY(runA && runB);
    QTRY_VERIFY_WITH_TIMEOUT(!compare->isComputing() && compare->regressionTable()->currentIndex().isValid(), 20000);
    QCOMPARE(runA->currentText(), QStringLiteral("drafter-x/diagnose/taps-shift:-1"));
    QCOMPARE(runB->currentText(), QStringLiteral("drafter-x/diagnose/baseline"));
    const auto& shown = compare->regressionModel()->regression(compare->regressionTable()->currentIndex().row());
    QCOMPARE(shown.stepA, candidate.gains.front().stepB);  // the hypothesis's block
    QCOMPARE(shown.stepB, candidate.gains.front().stepA);  // the baseline's
    QCOMPARE(window.context()->selection().step, candidate.gains.front().stepA);
    test::saveScreenshot(&window, QStringLiteral("diagnosis_compare_1280x720"));

    // The harmful one: A = the baseline, its largest loss chosen.
    window.findChild<QDockWidget*>(QStringLiteral("DiagnosisDock"))->raise();
    QTRY_VERIFY(inFront(view));
    const QModelIndex maskRow = rowNamed(*model, QStringLiteral("mask:anchor-visible"));
    const auto& harmful = d.hypotheses[static_cast<std::size_t>(maskRow.row())];
    click(view->hypothesisList(), maskRow);
    QTRY_VERIFY(inFront(compare));
    QTRY_VERIFY_WITH_TIMEOUT(!compare->isComputing() && compare->regressionTable()->currentIndex().isValid() &&
                                 compare->regressionModel()->regression(compare->regressionTable()->currentIndex().row()).stepB ==
                                     harmful.losses.front().stepB,
                             20000);
    QCOMPARE(runA->currentText(), QStringLiteral("drafter-x/diagnose/baseline"));
    QCOMPARE(runB->currentText(), QStringLiteral("drafter-x/diagnose/mask:anchor-visible"));

    // A block of a mask hypothesis: selected, the mask view diffing against the reference.
    window.findChild<QDockWidget*>(QStringLiteral("DiagnosisDock"))->raise();
    QTRY_VERIFY(inFront(view));
    view->hypothesisList()->expand(maskRow);
    const QModelIndex loss = model->index(0, 0, maskRow);
    click(view->hypothesisList(), loss);
    QCOMPARE(window.context()->selection(), (Selection{harmful.run, model->block(loss).prompt, harmful.losses.front().stepB}));
    QTRY_VERIFY(inFront(window.maskView()));
    QCOMPARE(window.maskView()->controls()->scene().diffAgainst, std::optional(dfi::analysis::MaskVariant::Reference));
    test::saveScreenshot(&window, QStringLiteral("diagnosis_mask_block_1280x720"));

    // A block of a tap hypothesis: the statistics view.
    window.findChild<QDockWidget*>(QStringLiteral("DiagnosisDock"))->raise();
    QTRY_VERIFY(inFront(view));
    view->hypothesisList()->expand(model->index(0, 0));
    const QModelIndex gain = model->index(0, 0, model->index(0, 0));
    click(view->hypothesisList(), gain);
    QCOMPARE(window.context()->selection().step, candidate.gains.front().stepB);
    QTRY_VERIFY(inFront(window.statsView()));

    // A wide screen.
    window.findChild<QDockWidget*>(QStringLiteral("DiagnosisDock"))->raise();
    window.resize(1920, 1080);
    QTRY_VERIFY(inFront(view));
    QTest::qWait(200);
    test::saveScreenshot(&window, QStringLiteral("diagnosis_window_1920x1080"));
  }

  // A diagnosis being written (the engine, or `serve` for the GUI) is followed: a hypothesis
  // run that lands in the file is measured on screen, the drafter shown stays the same.
  void followsADiagnosisBeingWritten() {
    const QString path = dir_.filePath(QStringLiteral("growing.dfi"));
    const std::vector<std::string> battery{"taps-shift:-1", "mask:anchor-visible"};
    {
      dfi::session::Writer writer(path.toStdString(), {.mode = dfi::session::OpenMode::Overwrite});
      writer.addTokenStrings(dfi::fixture::fixtureTokenStrings());
      writeRun(writer, "drafter-x", "baseline", dfi::analysis::withDiagnosisPlan("{}", planOf(battery)));
      writeRun(writer, "drafter-x", "taps-shift:-1", "{}");
      writer.close();
    }
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    DiagnosisView view(&context);
    view.resize(1280, 720);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy computed(&view, &DiagnosisView::computed);
    QVERIFY(context.open(path));
    QVERIFY(computed.wait(20000));
    const QModelIndex pending = rowNamed(*view.model(), QStringLiteral("mask:anchor-visible"));
    QCOMPARE(pending.data(DiagnosisModel::StateRole).toInt(), static_cast<int>(Row::NotMeasured));
    QVERIFY(view.summary().contains(QStringLiteral("1 of 4 hypotheses measured")));

    {
      dfi::session::Writer writer(path.toStdString(), {.mode = dfi::session::OpenMode::Append});
      writeRun(writer, "drafter-x", "mask:anchor-visible", "{}");
      writer.close();
    }
    context.poll();
    QVERIFY(computed.wait(20000));
    const auto expected = readBack(path);
    QCOMPARE(view.model()->rowCount(), static_cast<int>(expected[0].hypotheses.size()));
    const QModelIndex measured = rowNamed(*view.model(), QStringLiteral("mask:anchor-visible"));
    QCOMPARE(measured.data(DiagnosisModel::StateRole).toInt(), static_cast<int>(Row::Measured));
    QCOMPARE(measured.row(), 1);  // ranked between the candidate and the unmeasured
    QCOMPARE(measured.siblingAtColumn(DiagnosisModel::BarColumn).data(DiagnosisModel::EstimateRole).toDouble(),
             expected[0].hypotheses[1].deltaTau.estimate);
    QVERIFY(view.summary().contains(QStringLiteral("2 of 4 hypotheses measured")));
  }

  // A session without a diagnosis says how to make one.
  void emptyStateSaysHowToDiagnose() {
    const QString plain = dir_.filePath(QStringLiteral("plain.dfi"));
    dfi::fixture::writeFixtureFile(plain.toStdString());
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    DiagnosisView view(&context);
    view.resize(900, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(view.hint().contains(QStringLiteral("No session open")));
    QSignalSpy computed(&view, &DiagnosisView::computed);
    QVERIFY(context.open(plain));
    QVERIFY(computed.wait(20000));
    QVERIFY(view.hint().contains(QStringLiteral("holds no diagnosis")));
    QVERIFY(view.hint().contains(QStringLiteral("dflash-eval diagnose --target DIR --drafter DIR --prompts FILE")));
    QCOMPARE(view.model()->rowCount(), 0);
    QVERIFY(view.exportData().isEmpty());
    test::saveScreenshot(&view, QStringLiteral("diagnosis_empty"));
  }

  // `render --view diagnosis`: the panel as a picture, its candidate's bar in it.
  void rendersHeadless() {
    const QString out = dir_.filePath(QStringLiteral("renders"));
    QCOMPARE(renderViews({path_, {QStringLiteral("diagnosis")}, std::nullopt, out, QStringLiteral("png")}), 0);
    const QImage image(out + QStringLiteral("/diagnosis.png"));
    QCOMPARE(image.size(), QSize(1600, 1000));
    int green = 0;
    for (int y = 0; y < image.height(); y += 2)
      for (int x = 0; x < image.width(); x += 2) green += test::similarColour(image.pixelColor(x, y), IntervalBarDelegate::above(), 20);
    QVERIFY2(green > 20, qPrintable(QString::number(green)));
  }
};

QTEST_MAIN(TestDiagnosisView)
#include "test_diagnosis_view.moc"
