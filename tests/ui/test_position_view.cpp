// The positions panel on the fixture session (two live runs, B = 8, top-4 tables): it follows
// the selected run, overlays a ticked one, and its three plots draw the analysis's figures
// (dfi/analysis/position_metrics.h, tested by hand in tests/core/analysis): a point per draft
// slot, one per anchor-position bin with its interval, one per non-empty reliability bin, and
// the diagonal. Screenshot: <build>/screenshots/position_view.png.

#include <QMenu>
#include <QSignalSpy>
#include <QtTest>
#include <qcustomplot.h>

#include "session/file_session_source.h"
#include "session/session_context.h"
#include "dfi/analysis/position_metrics.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "gui_test_support.h"
#include "models/tau_table_model.h"
#include "session_fixture.h"
#include "panels/position_view.h"

using namespace dfi;
using namespace dfi::ui;

class TestPositionView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;

  analysis::PositionMetrics expected(session::RunId run) {
    session::Reader reader(path_.toStdString());
    for (const session::RunRecord& r : reader.runs())
      if (r.runId == run) return analysis::computePositionMetrics(reader, r).at(0);
    throw std::runtime_error("no such run");
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("positions.dfi"));
    // 30 steps a prompt take the anchors from ~10 past 32, 64 and 128: several position bins.
    fixture::writeFixtureFile(path_.toStdString(), {.stepsPerPrompt = 30});
  }

  void plotsFollowTheSelectedRunAndOverlayTickedOnes() {
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    PositionView view(&context);
    view.resize(1280, 420);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy computed(&view, &PositionView::computed);
    QVERIFY(context.open(path_));
    QVERIFY(computed.wait(20000) || !view.isComputing());
    QCOMPARE(view.shownRuns(), (std::vector<session::RunId>{1}));

    const analysis::PositionMetrics a = expected(1);
    QCOMPARE(a.slotAcceptance.size(), std::size_t{7});
    QVERIFY(a.anchorBins.size() >= 3);
    QCOMPARE(view.slotPlot()->graphCount(), 1);
    QCOMPARE(view.slotPlot()->graph(0)->dataCount(), 7);
    for (int slot = 0; slot < 7; ++slot)
      QCOMPARE(view.slotPlot()->graph(0)->data()->at(slot)->value, a.slotAcceptance[static_cast<std::size_t>(slot)]);
    QCOMPARE(view.anchorPlot()->graphCount(), 1);
    QCOMPARE(view.anchorPlot()->graph(0)->dataCount(), static_cast<int>(a.anchorBins.size()));
    QCOMPARE(view.anchorPlot()->graph(0)->data()->at(1)->value, a.anchorBins[1].meanLength.estimate);
    auto* bars = qobject_cast<QCPErrorBars*>(view.anchorPlot()->plottable(1));
    QVERIFY(bars);
    QCOMPARE(bars->dataCount(), static_cast<int>(a.anchorBins.size()));
    // Every draft is the fixture's top-1 at p = .55: one reliability bin, at (.55, accepted).
    int nonEmpty = 0;
    for (const auto& r : a.calibration.bins) nonEmpty += r.count > 0;
    QCOMPARE(nonEmpty, 1);
    QCOMPARE(view.reliabilityPlot()->graphCount(), 1);
    QCOMPARE(view.reliabilityPlot()->graph(0)->dataCount(), 1);
    QVERIFY(qAbs(view.reliabilityPlot()->graph(0)->data()->at(0)->key - 0.55) < 1e-6);
    QCOMPARE(view.reliabilityPlot()->graph(0)->data()->at(0)->value, a.calibration.acceptedFraction);
    QCOMPARE(view.reliabilityPlot()->itemCount(), 1);  // the diagonal
    QVERIFY(view.reliabilityPlot()->graph(0)->name().contains(
        QString::number(a.calibration.expectedCalibrationError, 'f', 3).mid(1)));  // ".144"

    // Selecting a block of run 2 follows it; ticking run 1 overlays it, with a legend.
    context.select({2, 0, 0});
    QVERIFY(computed.wait(20000));
    QCOMPARE(view.shownRuns(), (std::vector<session::RunId>{2}));
    QCOMPARE(view.slotPlot()->graph(0)->data()->at(0)->value, expected(2).slotAcceptance[0]);
    view.setRunOverlaid(1, true);
    QTRY_VERIFY(!view.isComputing());
    QCOMPARE(view.shownRuns(), (std::vector<session::RunId>{2, 1}));
    for (QCustomPlot* plot : {view.slotPlot(), view.anchorPlot(), view.reliabilityPlot()}) {
      QCOMPARE(plot->graphCount(), 2);
      QVERIFY(plot->legend->visible());
    }
    QCOMPARE(view.slotPlot()->graph(1)->pen().color(), TauTableModel::seriesColour(1));
    QCOMPARE(view.runsMenu()->actions().size(), 2);
    QVERIFY(!view.runsMenu()->actions().at(1)->isEnabled());  // the selected run stays drawn

    // The CSV carries every point of the three plots.
    const CsvTable csv = view.exportData();
    const auto b = expected(2);
    QCOMPARE(csv.rows.size(), 2 * 7 + a.anchorBins.size() + b.anchorBins.size() + 2);
    test::saveScreenshot(&view, QStringLiteral("position_view"));

    context.close();
    QCOMPARE(view.slotPlot()->graphCount(), 0);
  }

  // Two runs of one drafter: the legend names only what differs, the CSV the whole name.
  void legendNamesWhatTellsTheCurvesApart() {
    const QString path = dir_.filePath(QStringLiteral("names.dfi"));
    {
      session::Writer writer(path.toStdString(), {.mode = session::OpenMode::Overwrite});
      for (const char* name : {"drafter-good/live/reference", "drafter-good/teacher-forced/reference"}) {
        session::RunRecord run;
        run.name = name;
        run.blockSize = 8;
        run.topK = 4;
        const session::RunId id = writer.addRun(run);
        writer.addPrompt({id, 0, "", 0, "", fixture::fixturePromptTokens(0), 0});
        session::StepRecord step = fixture::fixtureStep(0, 0, 1, 10, 7, 4);
        step.runId = id;
        writer.addStep(step);
      }
      writer.close();
    }
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    PositionView view(&context);
    view.resize(1280, 420);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(context.open(path));
    view.setRunOverlaid(2, true);
    QTRY_COMPARE(view.slotPlot()->graphCount(), 2);
    QCOMPARE(view.slotPlot()->graph(0)->name(), QStringLiteral("live"));
    QCOMPARE(view.slotPlot()->graph(1)->name(), QStringLiteral("teacher-forced"));
    QCOMPARE(view.exportData().rows.front()[1], QStringLiteral("drafter-good/live/reference"));
  }
};

QTEST_MAIN(TestPositionView)
#include "test_position_view.moc"
