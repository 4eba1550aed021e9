// Every panel on one session written with the session Writer, inside the main window:
// selecting a step in the navigator drives the token view and the mask view, the log dock
// shows the libraries' messages, bad files become a dialog plus a log line, the layout can
// be reset, and the current view exports. Screenshots: <build>/screenshots/window_*.png.

#include <QComboBox>
#include <QDockWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTreeView>
#include <QTextBrowser>
#include <QtTest>

#include "session/file_session_source.h"
#include "session/session_context.h"
#include "dfi/analysis/run_comparison.h"
#include "dfi/base/log.h"
#include "gui_test_support.h"
#include "models/mask_layout.h"
#include "models/navigator_model.h"
#include "models/tau_table_model.h"
#include "models/token_table_model.h"
#include "session_fixture.h"
#include "widgets/comparison_plots.h"
#include "widgets/empty_hint.h"
#include "widgets/heatmap_plot.h"
#include "widgets/recent_files_menu.h"
#include "widgets/token_strip.h"
#include "panels/compare_view.h"
#include "panels/log_dock.h"
#include "windows/main_window.h"
#include "panels/mask_controls.h"
#include "widgets/fitted_plot.h"
#include "panels/mask_view.h"
#include "panels/attention_view.h"
#include "panels/navigator.h"
#include "panels/overview_view.h"
#include "dfi/analysis/recorded_summary.h"
#include "panels/stats_view.h"
#include "panels/token_view.h"

using namespace dfi::ui;
using State = TokenTableModel::SlotState;

class TestSessionPanels : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;

  // A fixture session of `shape` open in `window` at 1280x720, prompt 0's step 1 selected.
  bool showFixtureStep(MainWindow& window, const QString& name, const dfi::fixture::FixtureShape& shape) {
    const QString path = dir_.filePath(name);
    dfi::fixture::writeFixtureFile(path.toStdString(), shape);
    window.resize(1280, 720);
    window.show();
    if (!QTest::qWaitForWindowExposed(&window) || !window.openFile(path)) return false;
    selectStep(window, 0, 1);
    return true;
  }

  // Selects step `stepIndex` of prompt `prompt` of the first run through the navigator's tree
  // (once its worker has loaded it).
  static void selectStep(MainWindow& window, int prompt, int stepIndex) {
    QTRY_VERIFY(!window.navigator()->model()->isLoading());
    QTreeView* tree = window.navigator()->tree();
    const QModelIndex run = tree->model()->index(0, 0);
    const QModelIndex step = tree->model()->index(stepIndex, 0, tree->model()->index(prompt, 0, run));
    tree->setCurrentIndex(step);
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("session.dfi"));
    dfi::fixture::writeFixtureFile(path_.toStdString());
  }

  // The first screen: on opening, the overview is in front and lists the runs with their tau
  // and interval (the analysis library's numbers, in the convention on screen), the prompt
  // sets and the largest difference; clicking a run selects it in the navigator, clicking the
  // difference opens the compare view on that pair.
  void overviewIsTheFirstScreenAndLinksIntoThePanels() {
    MainWindow window;
    window.resize(1280, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    OverviewView* overview = window.overviewView();
    QVERIFY(overview->text().contains(QStringLiteral("No session open")));
    // Empty pictures say what to select, not bare 0..5 axes.
    QVERIFY(emptyHint(window.attentionView()->plot()).startsWith(QStringLiteral("Select a step in the navigator")));
    QVERIFY(emptyHint(window.statsView()->curves()).startsWith(QStringLiteral("Select a step in the navigator")));
    QVERIFY(emptyHint(window.compareView()->plots()->histogram()).contains(QStringLiteral("two or more runs")));
    QSignalSpy computed(overview, &OverviewView::computed);
    QVERIFY(window.openFile(path_));
    QVERIFY(computed.wait(20000));
    QTRY_VERIFY(!overview->visibleRegion().isEmpty());  // raised on opening
    // The comparison behind it waits (Qt keeps a dock behind a tab 'visible', off-screen).
    QVERIFY(window.compareView()->isStale());
    QVERIFY(!window.compareView()->isComputing());

    // The rows and the paired comparisons of `dflash-eval summary` over the same file, from
    // the same code (analysis/recorded_summary.h): every row's tau and interval shown.
    const auto summary = dfi::analysis::recordedSummaryRuns(path_.toStdString());
    const auto rows = dfi::analysis::summarizeRuns(summary);
    QCOMPARE(rows.size(), std::size_t{6});  // 2 drafters x (gsm8k, humaneval, all)
    const QString text = overview->text();
    for (const auto& row : rows) {
      QVERIFY2(text.contains(QString::fromStdString(row.drafter)), qPrintable(text));
      QVERIFY2(text.contains(QStringLiteral("%1\n[%2, %3]")
                                 .arg(row.tau.estimate, 0, 'f', 2)
                                 .arg(row.tau.low, 0, 'f', 2)
                                 .arg(row.tau.high, 0, 'f', 2)),
               qPrintable(text));
    }
    QVERIFY(text.contains(QStringLiteral("\u03c4 (z-lab)")));
    QVERIFY(text.contains(QStringLiteral("gsm8k: 2 prompts")));
    QVERIFY(text.contains(QStringLiteral("humaneval: 1 prompt")));
    // The prompt sets are named as the runs table names them (it once said "(no set named)"
    // where the table named the prompts file).
    for (const auto& row : rows)
      if (row.dataset != "all") QVERIFY(text.contains(QString::fromStdString(row.dataset) + QStringLiteral(": ")));
    // drafter-a is the better one: the difference reads a vs b, the gain of a over b paired over
    // the prompts both answered: the summary's comparison of b against a, turned round.
    const auto comparisons = dfi::analysis::pairedComparisons(summary);
    QCOMPARE(comparisons.size(), std::size_t{1});
    const dfi::analysis::Interval d = comparisons[0].difference;
    QVERIFY(d.estimate < 0);
    QVERIFY2(text.contains(QStringLiteral("drafter-a vs drafter-b")) &&
                 text.contains(QStringLiteral("+%1").arg(-d.estimate, 0, 'f', 2)),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("[%1, %2] paired over 3 prompts (too few for a verdict: 8 needed)")
                               .arg(-d.high, 0, 'f', 2)
                               .arg(-d.low, 0, 'f', 2)),
             qPrintable(text));
    // The CSV export is the summary's rows, figure for figure.
    const CsvTable exported = overview->exportData();
    QCOMPARE(exported.rows.size(), rows.size());
    const auto column = [&](const char* key) { return exported.header.indexOf(QLatin1String(key)); };
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const QStringList& cells = exported.rows[i];
      QCOMPARE(cells[column("prompt_set")], QString::fromStdString(rows[i].dataset));
      QCOMPARE(cells[column("tau_reference")].toDouble(), rows[i].tau.estimate);
      QCOMPARE(cells[column("tau_reference_ci95")],
               QStringLiteral("%1 %2").arg(rows[i].tau.low, 0, 'g', 17).arg(rows[i].tau.high, 0, 'g', 17));
      QCOMPARE(cells[column("tau_vllm")].toDouble(), rows[i].tauVllm.estimate);
    }

    // The vLLM convention: its pooled taus and their intervals.
    window.context()->setTauConvention(TauConvention::Vllm);
    QVERIFY(overview->text().contains(QStringLiteral("\u03c4 (vLLM)")));
    for (const auto& row : rows)
      QVERIFY2(overview->text().contains(QStringLiteral("%1\n[%2, %3]")
                                             .arg(row.tauVllm.estimate, 0, 'f', 2)
                                             .arg(row.tauVllm.low, 0, 'f', 2)
                                             .arg(row.tauVllm.high, 0, 'f', 2)),
               qPrintable(overview->text()));
    window.context()->setTauConvention(TauConvention::Reference);

    // Clicking a run name selects the run in the navigator.
    QTRY_VERIFY(!window.navigator()->model()->isLoading());
    const auto click = [&](const QString& words) {
      QTextBrowser* browser = overview->browser();
      QTextCursor found = browser->document()->find(words);
      QVERIFY2(!found.isNull(), qPrintable(words));
      found.setPosition(found.selectionStart() + 2);
      browser->ensureCursorVisible();
      const QPoint at = browser->cursorRect(found).center();
      QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, at);
    };
    click(QStringLiteral("drafter-b"));
    QTRY_COMPARE(window.context()->selection().run, dfi::session::RunId{2});
    QCOMPARE(window.navigator()->tree()->currentIndex().data().toString(), QStringLiteral("drafter-b"));

    // Clicking the difference opens the compare view on it.
    QSignalSpy compared(window.compareView(), &CompareView::computed);
    click(QStringLiteral("drafter-a vs drafter-b"));
    QTRY_VERIFY(!window.compareView()->visibleRegion().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!window.compareView()->isComputing() && window.compareView()->tauModel()->rowCount() == 2, 20000);
    QCOMPARE(window.compareView()->pair().prompts.size(), std::size_t{3});
    test::saveScreenshot(&window, QStringLiteral("window_overview_compare"));
    // Choosing a step brings its tokens forward, in place of the overview.
    window.findChild<QDockWidget*>(QStringLiteral("OverviewDock"))->raise();
    QTRY_VERIFY(!overview->visibleRegion().isEmpty());
    test::saveScreenshot(&window, QStringLiteral("window_overview"));
    selectStep(window, 0, 1);
    QTRY_VERIFY(!window.tokenView()->visibleRegion().isEmpty());
    QVERIFY(overview->visibleRegion().isEmpty());
    // A block without attention says so (and how to get it) where the map would be.
    window.findChild<QDockWidget*>(QStringLiteral("AttentionDock"))->raise();
    QTRY_VERIFY(emptyHint(window.attentionView()->plot()).contains(QStringLiteral("no attention for this block")));
    QVERIFY(emptyHint(window.compareView()->plots()->histogram()).isEmpty());  // two runs: drawn
  }

  void selectingAStepDrivesEveryPanel() {
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openFile(path_));
    QTRY_VERIFY(window.logDock()->plainText().contains(QLatin1String("opened")));  // spdlog -> dock

    selectStep(window, 1, 2);
    const Selection selection = window.context()->selection();
    QCOMPARE(selection.prompt, 1);
    const auto step = window.context()->step(selection.step);
    QVERIFY(step.has_value());
    QCOMPARE(step->stepIndex, 2);

    // Token view: anchor + 7 slots; the accepted prefix, the first mismatch, the rest rejected.
    TokenTableModel* tokens = window.tokenView()->model();
    QCOMPARE(tokens->rowCount(), 8);
    const int accepted = dfi::fixture::fixtureAccepted(0, 1, 2, 7);
    for (int row = 0; row < 8; ++row) {
      const auto state = State(tokens->index(row, 0).data(TokenTableModel::SlotStateRole).toInt());
      const State expected = row == 0                ? State::Anchor
                             : row <= accepted       ? State::Accepted
                             : row == accepted + 1   ? State::FirstMismatch
                                                     : State::NotReached;
      QCOMPARE(state, expected);
    }
    if (accepted < 7) {
      const QModelIndex mismatch = tokens->index(accepted + 1, TokenTableModel::TargetRankColumn);
      QCOMPARE(mismatch.data().toString(), QStringLiteral("2"));  // the fixture ranks the target second
      QVERIFY(tokens->index(accepted + 1, TokenTableModel::DraftColumn).data(Qt::ToolTipRole).toString().contains(
          QLatin1String("<- target")));
      const double h = tokens->index(accepted + 1, TokenTableModel::EntropyColumn).data().toDouble();
      QVERIFY(std::abs(h - (-(0.55 * std::log(0.55) + 0.25 * std::log(0.25) + 0.1 * std::log(0.1) +
                              0.05 * std::log(0.05)))) < 1e-3);
    }
    QVERIFY2(window.tokenView()->headline().contains(QStringLiteral("step 2")), qPrintable(window.tokenView()->headline()));
    // The response strip: prompt (11 tokens), first sample, then what the steps committed.
    TokenStrip* strip = window.tokenView()->strip();
    QVERIFY(strip->chipRect(11).isValid());
    QVERIFY(strip->chipAt(strip->chipRect(0).center()) == 0);

    // Mask view follows the block: its anchor, B = 8, and token texts in the hover.
    MaskView* mask = window.maskView();
    QCOMPARE(mask->maskLayout()->scene().anchor, step->anchorPosition);
    QCOMPARE(mask->maskLayout()->rows(), 8);
    const QString hover = mask->describeCell(0, 3);
    QVERIFY2(hover.contains(QStringLiteral("context position 3 '")), qPrintable(hover));
    const QString drafted = mask->describeCell(0, mask->maskLayout()->contextColumns() + 1);
    QVERIFY2(drafted.contains(QLatin1String("drafted '")), qPrintable(drafted));

    // Clicking a token of the response selects the step that committed it.
    QSignalSpy selected(window.context(), &SessionContext::selectionChanged);
    const int firstCommitted = 11 + 1;  // after the prompt and the first sample: step 0's tokens
    QTest::mouseClick(strip, Qt::LeftButton, {}, strip->chipRect(firstCommitted).center());
    QCOMPARE(selected.count(), 1);
    QCOMPARE(window.context()->step(window.context()->selection().step)->stepIndex, 0);

    selectStep(window, 1, 2);
    // The mask picture of the selected block: the anchor's column masked, the one before allowed.
    if (mask->plot()->isResampling()) {
      QSignalSpy resampled(mask->plot(), &HeatmapPlot::resampled);
      QVERIFY(resampled.wait(10000));
    }
    mask->plot()->replot();
    const QImage picture = mask->plot()->grab().toImage();
    auto pixel = [&](std::int64_t row, std::int64_t column) {
      return picture.pixelColor(QPointF(mask->plot()->xAxis->coordToPixel(double(column)),
                                        mask->plot()->yAxis->coordToPixel(double(row))).toPoint());
    };
    QVERIFY(test::similarColour(pixel(3, step->anchorPosition), MaskView::colour(false, kMasked)));
    QVERIFY(test::similarColour(pixel(3, step->anchorPosition - 1), MaskView::colour(false, kAllowed)));
    test::saveScreenshot(&window, QStringLiteral("window_session"));
    test::saveScreenshot(window.tokenView(), QStringLiteral("window_tokens"));
    test::saveScreenshot(window.maskView(), QStringLiteral("window_mask"));
    test::saveScreenshot(window.navigator(), QStringLiteral("window_navigator"));
    test::saveScreenshot(window.logDock(), QStringLiteral("window_log"));
  }

  // The mask picture of a recorded block is the mask its run ran: the run's variant (even where
  // the step's own field says otherwise) and its drafter's sliding window, not a default.
  void maskDrawsTheRunsVariantAndWindow() {
    MainWindow window;
    QVERIFY(showFixtureStep(window, QStringLiteral("sliding.dfi"),
                            {.maskVariant = dfi::session::MaskVariant::AnchorVisible, .slidingWindow = 6}));
    MaskView* mask = window.maskView();
    QTRY_COMPARE(mask->maskLayout()->scene().spec.variant, dfi::analysis::MaskVariant::AnchorVisible);
    QComboBox* layer = nullptr;
    for (QComboBox* combo : mask->findChildren<QComboBox*>())
      if (combo->findText(QStringLiteral("sliding window")) >= 0) layer = combo;
    QVERIFY(layer);
    layer->setCurrentIndex(layer->findText(QStringLiteral("sliding window")));
    QTRY_COMPARE(mask->maskLayout()->scene().spec.slidingWindow, 6);
  }

  // A drafter whose config says is_causal draws causal blocks in its full layers too (the
  // per-type default would make them bidirectional), and the title says which. The config is
  // read by the engine's own reader, so it is a whole one.
  void maskFollowsTheDraftersIsCausal() {
    MainWindow window;
    const std::string config = R"({"model_type": "qwen3", "architectures": ["DFlashDraftModel"], "hidden_size": 32,
        "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 8, "vocab_size": 64, "block_size": 4, "is_causal": true,
        "dflash_config": {"target_layer_ids": [1], "mask_token_id": 63}})";
    QVERIFY(showFixtureStep(window, QStringLiteral("causal.dfi"), {.drafterConfigJson = config}));
    MaskView* mask = window.maskView();
    QTRY_VERIFY(mask->maskLayout() && mask->maskLayout()->scene().spec.causal == std::optional<bool>(true));
    const std::int64_t slot1Column = mask->maskLayout()->contextColumns() + 1;
    QCOMPARE(int(mask->maskLayout()->value(0, slot1Column)), 0);  // slot 0 does not see slot 1
    QCOMPARE(int(mask->maskLayout()->value(1, slot1Column)), 1);
    auto* title = qobject_cast<QCPTextElement*>(mask->plot()->plotLayout()->element(0, 0));
    QVERIFY(title && FittedPlot::fullText(title).contains(QStringLiteral(", causal block")));
  }

  void dropOpensAndRecentRemembersAndCloseClears() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QMimeData notSessions;
    notSessions.setUrls({QUrl::fromLocalFile(dir_.filePath(QStringLiteral("notes.txt")))});
    QDragEnterEvent refuse(QPoint(10, 10), Qt::CopyAction, &notSessions, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &refuse);
    QVERIFY(!refuse.isAccepted());

    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path_)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QVERIFY(window.context()->isOpen());
    QCOMPARE(window.context()->path(), path_);
    QCOMPARE(QSettings().value(QStringLiteral("recentFiles")).toStringList().value(0), QFileInfo(path_).absoluteFilePath());
    QTRY_COMPARE(window.navigator()->model()->rowCount(), 2);

    window.context()->close();
    QCOMPARE(window.navigator()->model()->rowCount(), 0);
    QCOMPARE(window.tokenView()->model()->rowCount(), 0);
    QVERIFY(window.windowTitle().startsWith(QLatin1String("DFlash Inspector")));
  }

  // Go > Next/Previous (Garbled) Block work from any panel, in the navigator's order, and every
  // panel follows; Help lists the keys.
  void goMovesBlockToBlockFromAnyPanel() {
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openFile(path_));
    selectStep(window, 0, 0);
    QTreeView* tree = window.navigator()->tree();
    const QModelIndex prompt0 = tree->model()->index(0, 0, tree->model()->index(0, 0));
    const auto stepId = [&](int row) { return tree->model()->index(row, 0, prompt0).data(NavigatorModel::StepIdRole).toLongLong(); };
    QTRY_COMPARE(window.context()->selection().step, stepId(0));
    const auto action = [&](const QString& text) {
      for (QAction* a : window.findChildren<QAction*>())
        if (a->text() == text) return a;
      return static_cast<QAction*>(nullptr);
    };
    window.tokenView()->table()->setFocus();  // another panel has the keyboard
    action(QStringLiteral("&Next Block"))->trigger();
    QCOMPARE(window.context()->selection().step, stepId(1));
    action(QStringLiteral("&Previous Block"))->trigger();
    QCOMPARE(window.context()->selection().step, stepId(0));
    action(QStringLiteral("&Previous Block"))->trigger();  // the first block: nothing before it
    QCOMPARE(window.context()->selection().step, stepId(0));
    action(QStringLiteral("Next &Garbled Block"))->trigger();
    const QModelIndex garbled = window.navigator()->tree()->currentIndex();
    QVERIFY(garbled.data(NavigatorModel::GarbledRole).toInt() > 0);
    QCOMPARE(garbled.data(NavigatorModel::StepIdRole).toLongLong(), window.context()->selection().step);
    QVERIFY(action(QStringLiteral("&Keyboard Shortcuts")));
  }

  // Open Recent keeps one entry per file however it was reached, and names two files of one
  // name by their folders too.
  void recentFilesAreDistinct() {
    QSettings().remove(QStringLiteral("recentFiles"));
    QDir(dir_.path()).mkpath(QStringLiteral("a"));
    QDir(dir_.path()).mkpath(QStringLiteral("b"));
    for (const char* name : {"a/demo.dfi", "b/demo.dfi"}) QFile::copy(path_, dir_.filePath(QString::fromLatin1(name)));
    RecentFilesMenu menu;
    menu.add(dir_.filePath(QStringLiteral("a/demo.dfi")));
    menu.add(dir_.filePath(QStringLiteral("b/demo.dfi")));
    menu.add(dir_.filePath(QStringLiteral("b/../a/demo.dfi")));  // the first one again
    QCOMPARE(menu.files().size(), 2);
    QStringList labels;
    for (QAction* action : menu.actions())
      if (action->text().contains(QStringLiteral("demo.dfi"))) labels << action->text();
    QCOMPARE(labels.size(), 2);
    QVERIFY2(labels[0].contains(QStringLiteral("/a)")) && labels[1].contains(QStringLiteral("/b)")),
             qPrintable(labels.join(QLatin1Char('|'))));
    QSettings().remove(QStringLiteral("recentFiles"));
  }

  // A run still being recorded: new steps of the shown response reach the navigator, the
  // response strip and the training-layout mask without reselecting anything.
  void panelsFollowAFileBeingWritten() {
    const QString live = dir_.filePath(QStringLiteral("live.dfi"));
    dfi::session::Writer writer(live.toStdString(), {.mode = dfi::session::OpenMode::Overwrite});
    const auto runs = dfi::fixture::writeFixture(writer, {.prompts = 1, .stepsPerPrompt = 2});
    MainWindow window;
    window.show();
    QVERIFY(window.openFile(live));
    selectStep(window, 0, 1);
    window.maskView()->controls()->setMaskLayout(MaskLayoutKind::Training);
    QCOMPARE(window.maskView()->maskLayout()->scene().anchors.size(), std::size_t(2));
    TokenStrip* strip = window.tokenView()->strip();
    QVERIFY(strip->chipRect(17).isValid());  // 10 prompt tokens, the first sample, 2 steps' tokens
    QVERIFY(!strip->chipRect(18).isValid());

    // The next step of the same response, as the engine would append it.
    const auto previous = window.context()->steps(runs[0], 0).back();
    const std::int64_t anchor = previous.anchorPosition + previous.acceptedCount + 1;
    dfi::session::StepRecord next = dfi::fixture::fixtureStep(0, 0, 2, anchor, 7, 4);
    next.runId = runs[0];
    writer.addStep(next);
    writer.flush();
    QSignalSpy appended(window.context(), &SessionContext::stepsAppended);
    QTRY_VERIFY_WITH_TIMEOUT(appended.count() > 0, 5000);
    QCOMPARE(window.navigator()->model()->data(window.navigator()->model()->index(0, NavigatorModel::StepsColumn)).toInt(), 3);
    QCOMPARE(window.maskView()->maskLayout()->scene().anchors.size(), std::size_t(3));
    QVERIFY(strip->chipRect(int(anchor + next.acceptedCount + 1)).isValid());  // through the new bonus
    // The overview, behind the tokens, reads the grown file once it is shown again.
    OverviewView* overview = window.overviewView();
    QVERIFY(overview->visibleRegion().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!overview->isComputing(), 10000);  // the reading at opening
    QSignalSpy recomputed(overview, &OverviewView::computed);
    QTest::qWait(2300);  // the quiet time after the last step
    QCOMPARE(recomputed.count(), 0);
    window.findChild<QDockWidget*>(QStringLiteral("OverviewDock"))->raise();
    QVERIFY(recomputed.wait(10000));
    const CsvTable runsTable = overview->exportData();
    QCOMPARE(runsTable.rows.size(), std::size_t{2});
    QCOMPARE(runsTable.rows[0][runsTable.header.indexOf(QLatin1String("responses"))], QStringLiteral("1"));  // one prompt, now of 3 steps
    QCOMPARE(runsTable.rows[0][runsTable.header.indexOf(QLatin1String("steps"))], QStringLiteral("3"));
    QVERIFY(overview->text().contains(QStringLiteral("drafter-a")));
    writer.close();
  }

  void trainingLayoutUsesTheResponse() {
    MainWindow window;
    window.show();
    QVERIFY(window.openFile(path_));
    selectStep(window, 0, 3);
    window.maskView()->controls()->setMaskLayout(MaskLayoutKind::Training);
    const MaskScene& scene = window.maskView()->maskLayout()->scene();
    QCOMPARE(scene.anchors.size(), std::size_t(6));  // every step of the response
    QCOMPARE(window.maskView()->maskLayout()->rows(), 6 * 8);
    window.maskView()->controls()->setDiffAgainst(dfi::analysis::MaskVariant::AnchorVisible);
    QTRY_VERIFY(!window.maskView()->plot()->isResampling());
    window.maskView()->resize(1000, 600);
    QTRY_VERIFY(!window.maskView()->plot()->isResampling());
    test::saveScreenshot(window.maskView(), QStringLiteral("window_mask_training_diff"));
  }

  void badFileBecomesDialogAndLogLine() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QString junk = dir_.filePath(QStringLiteral("junk.dfi"));
    QFile file(junk);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(200, 'x'));
    file.close();
    QVERIFY(!window.openFile(junk));
    QMessageBox* box = window.findChild<QMessageBox*>();
    QVERIFY(box != nullptr);
    QVERIFY(box->isVisible());
    QVERIFY(box->text().contains(QLatin1String("not a session file")));
    QTRY_VERIFY(window.logDock()->plainText().contains(QLatin1String("not a session file")));
    box->close();
  }

  void resetLayoutBringsPanelsBack() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("MaskDock"));
    dock->close();
    window.findChild<QDockWidget*>(QStringLiteral("NavigatorDock"))->setFloating(true);
    QVERIFY(!dock->isVisible());
    window.resetLayout();
    QVERIFY(dock->isVisible());
    QVERIFY(!window.findChild<QDockWidget*>(QStringLiteral("NavigatorDock"))->isFloating());
  }

  void exportsTheFocusedPanel() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openFile(path_));
    // Just opened, the overview is in front: it is the view File > Export saves.
    QTRY_VERIFY(!window.overviewView()->visibleRegion().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!window.overviewView()->isComputing(), 20000);
    const QString overview = dir_.filePath(QStringLiteral("overview.csv"));
    window.exportCurrentView(overview);
    QFile overviewTable(overview);
    QVERIFY(overviewTable.open(QIODevice::ReadOnly));
    QVERIFY(overviewTable.readAll().startsWith("drafter,mode,mask_variant"));
    selectStep(window, 0, 1);
    window.tokenView()->table()->setFocus();
    QTRY_VERIFY(window.tokenView()->table()->hasFocus());
    const QString png = dir_.filePath(QStringLiteral("tokens.png"));
    window.exportCurrentView(png);
    QCOMPARE(QImage(png).size(), window.tokenView()->size());
    const QString pdf = dir_.filePath(QStringLiteral("tokens.pdf"));
    window.exportCurrentView(pdf);
    QVERIFY(QFileInfo(pdf).size() > 500);
    const QString svg = dir_.filePath(QStringLiteral("tokens.svg"));
    window.exportCurrentView(svg);  // a widget, not a plot: rendered as vectors too
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY(text.contains("<svg"));
    QVERIFY(text.contains("first mismatch"));  // the table's text is text, not pixels
    const QString csv = dir_.filePath(QStringLiteral("tokens.csv"));
    window.exportCurrentView(csv);  // the numbers behind the view
    QFile table(csv);
    QVERIFY(table.open(QIODevice::ReadOnly));
    QVERIFY(table.readAll().startsWith("Slot,Position,Draft,Target,Verdict"));
  }
};

QTEST_MAIN(TestSessionPanels)
#include "test_session_panels.moc"
