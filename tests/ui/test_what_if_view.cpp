// The What-if panel on the fixture session written as two teacher-forced runs (B = 8, top-4
// tables): it follows the selected run, shows analysis::budgetWhatIfs's rows (tested by hand in
// tests/core/analysis) in its table and plots, takes the cost model the run recorded and a file
// the user loads over it, names a bad file without losing the rows, and says what to select
// for a run of another mode.

#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>
#include <fstream>
#include <qcustomplot.h>

#include "dfi/analysis/budget_what_if.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "gui_test_support.h"
#include "panels/what_if_view.h"
#include "session/file_session_source.h"
#include "session/session_context.h"
#include "session_fixture.h"

using namespace dfi;
using namespace dfi::ui;

namespace {

constexpr int kBlock = 8, kTopK = 4;
const analysis::CostModel kRecordedCost{.target = {{1, 20.0}, {8, 22.0}, {64, 60.0}}, .drafterMilliseconds = 2.0};

std::vector<analysis::WhatIfRow> expectedRows(const QString& path, session::RunId run,
                                              const std::optional<analysis::CostModel>& cost) {
  session::Reader reader(path.toStdString());
  std::vector<session::StepRecord> steps;
  reader.forEachStep(run, [&](const session::StepRecord& s) { steps.push_back(s); });
  return analysis::budgetWhatIfs(
      {.steps = steps, .blockSize = kBlock, .topK = kTopK, .treeBudgets = analysis::defaultTreeBudgets(kBlock, kTopK)},
      cost);
}

}  // namespace

class TestWhatIfView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_, livePath_;

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("what-if.dfi"));
    {
      session::Writer writer(path_.toStdString(), {.mode = session::OpenMode::Overwrite});
      fixture::writeFixture(writer, {.prompts = 10, .stepsPerPrompt = 12, .blockSize = kBlock, .topK = kTopK,
                                     .mode = session::EvaluationMode::TeacherForced});
      for (const auto& statistic : analysis::costStatistics(kRecordedCost, 1)) writer.addStatistic(statistic);
      writer.close();
    }
    livePath_ = dir_.filePath(QStringLiteral("live.dfi"));
    fixture::writeFixtureFile(livePath_.toStdString());
  }

  void showsTheSelectedRunsWhatIfsWithItsCost() {
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    WhatIfView view(&context);
    view.resize(1280, 480);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy computed(&view, &WhatIfView::computed);
    QVERIFY(context.open(path_));
    QTRY_VERIFY(!view.rows().empty());

    // Run 1 recorded a cost model: the rows are the analysis's under it, one best.
    auto costOne = kRecordedCost;
    costOne.source = "calibrated in this run on cpu";
    const auto expected = expectedRows(path_, 1, costOne);
    QCOMPARE(view.rows(), expected);
    QCOMPARE(view.rows().size(), std::size_t{7 + 4});  // verify 2..8, ddtree 2..16 (7 slots x top-4 fill 28)
    QCOMPARE(view.table()->rowCount(), 11);
    QVERIFY(std::ranges::count_if(view.rows(), [](const auto& r) { return r.best; }) == 1);
    QCOMPARE(view.tauPlot()->graph(0)->dataCount(), 7);
    QCOMPARE(view.tauPlot()->graph(1)->dataCount(), 4);
    QCOMPARE(view.tauPlot()->graph(0)->data()->at(2)->value, expected[2].tau.estimate);
    QCOMPARE(view.speedupPlot()->graph(1)->data()->at(0)->value, expected[7].speedup->estimate);
    const int bestRow = static_cast<int>(std::ranges::find_if(expected, [](const auto& r) { return r.best; }) - expected.begin());
    QVERIFY(view.table()->item(bestRow, 0)->text().contains(QStringLiteral("best")));
    test::saveScreenshot(&view, QStringLiteral("what_if_view"));

    // A loaded file replaces it; a bad one is reported and changes nothing.
    const QString costFile = dir_.filePath(QStringLiteral("cost.json"));
    std::ofstream(costFile.toStdString()) << R"({"target_ms": {"1": 10, "128": 10.5}, "drafter_ms": 0.5, "source": "H200"})";
    QVERIFY(view.loadCostModel(costFile));
    const analysis::CostModel flat{.target = {{1, 10}, {128, 10.5}}, .drafterMilliseconds = 0.5, .source = "H200"};
    QCOMPARE(view.rows(), expectedRows(path_, 1, flat));
    QSignalSpy errors(&context, &SessionContext::errorOccurred);
    const QString badFile = dir_.filePath(QStringLiteral("bad.json"));
    std::ofstream(badFile.toStdString()) << R"({"target_ms": {"1": "fast"}, "drafter_ms": 1})";
    QVERIFY(!view.loadCostModel(badFile));
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.at(0).at(1).toString().contains(QStringLiteral("target_ms.1")));
    QCOMPARE(view.rows(), expectedRows(path_, 1, flat));

    // Run 2 recorded no cost: the loaded file still holds; without it, no speedup.
    context.select({2, 0, 0});
    QTRY_VERIFY(!view.isComputing() && view.rows() == expectedRows(path_, 2, flat));
    QVERIFY(view.loadCostModel(QString()));
    QCOMPARE(view.rows(), expectedRows(path_, 2, std::nullopt));
    QVERIFY(std::ranges::none_of(view.rows(), [](const auto& r) { return r.speedup.has_value(); }));
  }

  void aLiveRunHasNoWhatIfs() {
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    WhatIfView view(&context);
    view.resize(800, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy computed(&view, &WhatIfView::computed);
    QVERIFY(context.open(livePath_));
    context.select({1, 0, 0});
    QTRY_VERIFY(!view.isComputing());
    QVERIFY(computed.count() > 0 || computed.wait(5000));
    QVERIFY(view.rows().empty());
    QCOMPARE(view.table()->rowCount(), 0);
  }
};

QTEST_MAIN(TestWhatIfView)
#include "test_what_if_view.moc"
