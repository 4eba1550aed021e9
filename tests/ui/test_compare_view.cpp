// The compare view on a session written with the Writer (drafter-b regresses on prompt 1):
// per-run statistics against hand-computed ones, the A/B join on (prompt, anchor) against a
// brute-force one, the table models under QAbstractItemModelTester, choosing a regression
// selects B's block everywhere, the scatter marks B's worse prompts, and CSV export.
// Screenshot: <build>/screenshots/compare_view.png.

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include <algorithm>
#include <map>
#include <set>

#include "context/file_session_source.h"
#include "context/session_context.h"
#include "gui_test_support.h"
#include "models/block_regression_model.h"
#include "models/run_comparison.h"
#include "models/tau_table_model.h"
#include "session_fixture.h"
#include "widgets/comparison_plots.h"
#include "windows/compare_view.h"

using namespace dfi;
using namespace dfi::ui;

class TestCompareView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;
  test::FixtureShape shape_;

  std::vector<ComparedSeries> load() {
    FileSessionSource source(path_.toStdString());
    return loadComparedSeries(source);
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("compare.dfi"));
    test::writeFixtureFile(path_.toStdString(), shape_);
  }

  void statisticsPerRun() {
    const std::vector<ComparedSeries> series = load();
    QCOMPARE(series.size(), std::size_t{2});
    QCOMPARE(series[0].label, std::string("drafter-a"));
    QCOMPARE(series[1].drafter, std::string("drafter-b"));
    QCOMPARE(series[0].blockSize, shape_.blockSize);
    const std::vector<SeriesStatistics> stats = summarizeSeries(series, 200);
    for (int r = 0; r < 2; ++r) {
      const SeriesStatistics& s = stats[static_cast<std::size_t>(r)];
      QCOMPARE(s.prompts, (std::vector<session::PromptId>{0, 1, 2}));
      double meanOfMeans = 0;
      std::int64_t histogramSteps = 0;
      for (int p = 0; p < shape_.prompts; ++p) {
        double sum = 0;
        for (int i = 0; i < shape_.stepsPerPrompt; ++i) sum += test::fixtureAccepted(r, p, i, shape_.blockSize - 1) + 1;
        const double tau = sum / shape_.stepsPerPrompt;
        QVERIFY(std::abs(s.promptTau[static_cast<std::size_t>(p)] - tau) < 1e-12);
        meanOfMeans += tau / shape_.prompts;
      }
      QVERIFY(std::abs(s.tau.estimate - meanOfMeans) < 1e-12);
      QVERIFY(s.tau.low <= s.tau.estimate && s.tau.estimate <= s.tau.high);
      for (std::int64_t count : s.histogram) histogramSteps += count;
      QCOMPARE(histogramSteps, s.steps);
      QCOMPARE(s.slotRates.size(), static_cast<std::size_t>(shape_.blockSize - 1));
    }
  }

  // The CLI's summary table bootstraps per-response tau in prompt order with the shared
  // defaults (tests/eval/test_summary_table.cpp pins that side); so must this view, or the same
  // run would show two different intervals.
  void intervalsAreTheCliIntervals() {
    const std::vector<ComparedSeries> series = load();
    const std::vector<SeriesStatistics> stats = summarizeSeries(series);
    for (const SeriesStatistics& s : stats) {
      QVERIFY(std::is_sorted(s.prompts.begin(), s.prompts.end()));
      const analysis::Interval cli = analysis::bootstrapMean(s.promptTau);
      QCOMPARE(s.tau.low, cli.low);
      QCOMPARE(s.tau.high, cli.high);
    }
    const PairComparison pair = comparePair(series[0], stats[0], series[1], stats[1]);
    const analysis::Interval cli = analysis::bootstrapPairedDifference(pair.tauA, pair.tauB);
    QCOMPARE(pair.difference.low, cli.low);
    QCOMPARE(pair.difference.high, cli.high);
  }

  void pairJoinsBlocksOnPromptAndAnchor() {
    const std::vector<ComparedSeries> series = load();
    const std::vector<SeriesStatistics> stats = summarizeSeries(series, 200);
    const PairComparison pair = comparePair(series[0], stats[0], series[1], stats[1], 200);
    QCOMPARE(pair.prompts.size(), std::size_t{3});
    QVERIFY(pair.tauB[1] < pair.tauA[1]);  // drafter-b regresses on prompt 1 only
    QCOMPARE(pair.tauB[0], pair.tauA[0]);
    QVERIFY(pair.difference.estimate < 0);

    // Brute force: every block of B whose (prompt, anchor) A also has.
    std::map<std::pair<session::PromptId, std::int64_t>, int> blocksA;
    for (const ComparedStep& s : series[0].steps) blocksA[{s.prompt, s.anchor}] = s.acceptLength;
    std::int64_t matched = 0;
    std::multiset<std::pair<int, session::StepId>> expected;  // (drop, B's step)
    for (const ComparedStep& s : series[1].steps) {
      const auto it = blocksA.find({s.prompt, s.anchor});
      if (it == blocksA.end()) continue;
      ++matched;
      if (s.acceptLength < it->second) expected.insert({it->second - s.acceptLength, s.step});
    }
    QCOMPARE(pair.matchedBlocks, matched);
    QVERIFY(!pair.regressions.empty());
    std::multiset<std::pair<int, session::StepId>> found;
    for (std::size_t i = 0; i < pair.regressions.size(); ++i) {
      const BlockRegression& r = pair.regressions[i];
      QCOMPARE(r.prompt, session::PromptId{1});
      found.insert({r.acceptA - r.acceptB, r.stepB});
      if (i > 0) QVERIFY(pair.regressions[i - 1].acceptA - pair.regressions[i - 1].acceptB >= r.acceptA - r.acceptB);
    }
    QCOMPARE(found, expected);
  }

  void panelSelectsTheRegressedBlock() {
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    CompareView view(&context);
    view.resize(1400, 900);
    view.show();
    QAbstractItemModelTester tauTester(view.tauModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester regressionTester(view.regressionModel(),
                                              QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy computed(&view, &CompareView::computed);
    QVERIFY(context.open(path_));
    QVERIFY(computed.wait(20000));
    QCOMPARE(view.tauModel()->rowCount(), 2);
    QCOMPARE(view.tauModel()->shownRows(), (std::vector<int>{0, 1}));
    QVERIFY(view.regressionModel()->rowCount() > 0);

    // Choosing the first regression selects drafter-b's block in the session.
    QTableView* table = view.regressionTable();
    table->setCurrentIndex(table->model()->index(0, 0));
    const BlockRegression& r = view.regressionModel()->regression(0);
    QCOMPARE(context.selection().run, session::RunId{2});
    QCOMPARE(context.selection().step, r.stepB);
    QCOMPARE(context.step(r.stepB)->acceptLength(), r.acceptB);

    // The scatter: one dot per prompt, the regressed prompt in the worse colour.
    QCOMPARE(view.plots()->scatterData().rows.size(), std::size_t{3});
    view.plots()->scatter()->replot();
    const QImage picture = view.plots()->scatter()->toPixmap().toImage();
    int worse = 0;
    for (int y = 0; y < picture.height(); ++y)
      for (int x = 0; x < picture.width(); ++x)
        worse += test::similarColour(picture.pixelColor(x, y), ComparisonPlots::worseColour(), 30);
    QVERIFY2(worse > 5, qPrintable(QString::number(worse)));
    test::saveScreenshot(&view, QStringLiteral("compare_view"));

    // Unticking a run takes it out of the plots; swapping A and B empties the list (B is better).
    view.tauModel()->setData(view.tauModel()->index(1, TauTableModel::RunColumn), Qt::Unchecked, Qt::CheckStateRole);
    QCOMPARE(view.plots()->histogramData().rows.size(), static_cast<std::size_t>(shape_.blockSize));
    view.setPair(1, 0);
    QVERIFY(computed.wait(20000));
    QCOMPARE(view.regressionModel()->rowCount(), 0);
    QVERIFY(view.pair().difference.estimate > 0);
  }

  void hiddenPanelWaitsUntilShown() {
    // Behind its tab the panel must not read a big session while the window opens it.
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    CompareView view(&context);
    QSignalSpy computed(&view, &CompareView::computed);
    QVERIFY(context.open(path_));
    QVERIFY(view.isStale());
    QVERIFY(!view.isComputing());
    QCOMPARE(view.tauModel()->rowCount(), 0);
    view.show();
    QVERIFY(computed.wait(20000));
    QVERIFY(!view.isStale());
    QCOMPARE(view.tauModel()->rowCount(), 2);
  }

  void csvExport() {
    const QString path = dir_.filePath(QStringLiteral("table.csv"));
    writeCsv({{"name", "value"}, {{"plain", "1.5"}, {"with, comma", "say \"hi\""}}}, path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(file.readAll()),
             QStringLiteral("name,value\r\nplain,1.5\r\n\"with, comma\",\"say \"\"hi\"\"\"\r\n"));
    TauTableModel model;
    const std::vector<ComparedSeries> series = load();
    model.setRows(series, summarizeSeries(series, 100), 1);
    const CsvTable table = csvOf(model);
    QCOMPARE(table.header.size(), int{TauTableModel::ColumnCount});
    QCOMPARE(table.rows.size(), std::size_t{2});
    QCOMPARE(table.rows[0][0], QStringLiteral("drafter-a"));
  }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
