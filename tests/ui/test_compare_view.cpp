// The compare view on a session written with the Writer (drafter-b regresses on prompt 1): the
// table models under QAbstractItemModelTester, choosing a regression selects B's block
// everywhere and shows A's block beside B's (attention where stored, else the run's mask), the
// scatter marks B's worse prompts, and CSV export. The statistics it shows are
// dfi::analysis's (tests/core/analysis/test_run_comparison.cpp).
// Screenshot: <build>/screenshots/compare_view.png.

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include "session/file_session_source.h"
#include "session/session_context.h"
#include "gui_test_support.h"
#include "models/block_regression_model.h"
#include "dfi/analysis/run_comparison.h"
#include "models/tau_table_model.h"
#include "session_fixture.h"
#include "widgets/comparison_plots.h"
#include "models/token_table_model.h"
#include "widgets/heatmap_plot.h"
#include "panels/block_pair_view.h"
#include "panels/compare_view.h"

#include <QTabWidget>
#include <cstring>

#include "dfi/session/writer.h"

using namespace dfi;
using namespace dfi::ui;

class TestCompareView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;
  fixture::FixtureShape shape_;

  std::vector<analysis::ComparedSeries> load() {
    FileSessionSource source(path_.toStdString());
    return analysis::loadComparedSeries(
        source.runs(), [&](session::RunId run, const auto& visit) { source.forEachStepSummary(run, visit); });
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("compare.dfi"));
    fixture::writeFixtureFile(path_.toStdString(), shape_);
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
    const analysis::BlockRegression& r = view.regressionModel()->regression(0);
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
    // Legends sit outside the axes: they never cover a bar, a curve or a dot.
    for (QCustomPlot* plot : {view.plots()->histogram(), view.plots()->slotCurves(), view.plots()->scatter()}) {
      QVERIFY(plot->legend->visible());
      QVERIFY(!plot->legend->outerRect().intersects(plot->axisRect()->rect()));
    }

    // Unticking a run takes it out of the plots; swapping A and B empties the list (B is better).
    view.tauModel()->setData(view.tauModel()->index(1, TauTableModel::RunColumn), Qt::Unchecked, Qt::CheckStateRole);
    QCOMPARE(view.plots()->histogramData().rows.size(), static_cast<std::size_t>(shape_.blockSize));
    QCOMPARE(view.tauModel()->shownRows(), (std::vector<int>{0}));
    view.setPair(1, 0);
    QVERIFY(computed.wait(20000));
    QCOMPARE(view.tauModel()->shownRows(), (std::vector<int>{0, 1}));  // the plots follow the pair chosen
    QCOMPARE(view.regressionModel()->rowCount(), 0);
    QVERIFY(view.pair().difference.estimate > 0);
  }

  // Choosing a regression shows A's block and B's block side by side: each its own tokens and
  // verdicts, A with the attention the session stores for it, B (none stored) with its mask.
  void regressionShowsBothBlocks() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("pair.dfi"));
    fixture::writeFixtureFile(path.toStdString(), shape_);
    const std::vector<analysis::ComparedSeries> series = [&] {
      FileSessionSource source(path.toStdString());
      return analysis::loadComparedSeries(
          source.runs(), [&](session::RunId run, const auto& visit) { source.forEachStepSummary(run, visit); });
    }();
    const auto stats = analysis::summarizeSeries(series, 50);
    const analysis::PairComparison pair = analysis::comparePair(series[0], stats[0], series[1], stats[1], 50);
    QVERIFY(!pair.regressions.empty());
    const analysis::BlockRegression first = pair.regressions.front();
    // One layer of attention for A's block: every slot looks at the anchor's column only.
    const std::int64_t keys = first.anchor + shape_.blockSize;
    {
      session::Writer writer(path.toStdString(), {.mode = session::OpenMode::Append});
      std::vector<float> probs(static_cast<std::size_t>(2 * shape_.blockSize * keys), 0.0f);
      for (int h = 0; h < 2; ++h)
        for (int q = 0; q < shape_.blockSize; ++q) probs[static_cast<std::size_t>((h * shape_.blockSize + q) * keys + first.anchor)] = 1.0f;
      session::TensorRecord t;
      t.info.runId = series[0].run;
      t.info.stepId = first.stepA;
      t.info.name = "drafter.layers.0.attn.probs";
      t.info.layer = 0;
      t.info.dtype = session::TensorDType::F32;
      t.info.shape = {2, shape_.blockSize, keys};
      t.info.layout = "head,query,key";
      t.data.resize(probs.size() * sizeof(float));
      std::memcpy(t.data.data(), probs.data(), t.data.size());
      writer.addTensor(t);
      writer.close();
    }
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    CompareView view(&context);
    view.resize(1280, 700);
    view.show();
    QSignalSpy computed(&view, &CompareView::computed);
    QVERIFY(context.open(path));
    QVERIFY(computed.wait(20000));
    QVERIFY(view.blockPair()->side(0).headline->isHidden());  // nothing chosen yet: a hint, no empty tables
    QCOMPARE(view.lowerTabs()->currentWidget(), static_cast<QWidget*>(view.plots()));

    view.regressionTable()->setCurrentIndex(view.regressionTable()->model()->index(0, 0));
    QCOMPARE(view.regressionModel()->regression(0).stepB, first.stepB);
    QCOMPARE(view.lowerTabs()->currentWidget(), static_cast<QWidget*>(view.blockPair()));
    QCOMPARE(context.selection().step, first.stepB);  // the other panels follow B
    const BlockPairView::Side& a = view.blockPair()->side(0);
    const BlockPairView::Side& b = view.blockPair()->side(1);
    QCOMPARE(a.step, first.stepA);
    QCOMPARE(b.step, first.stepB);
    for (const auto* side : {&a, &b}) {
      const std::optional<session::StepRecord> step = context.step(side->step);
      QVERIFY(step);
      QVERIFY(side->table->isVisible() && side->picture->isVisible());
      QCOMPARE(side->tokens->rowCount(), shape_.blockSize);  // anchor + B-1 drafts
      for (int slot = 1; slot < shape_.blockSize; ++slot)
        QCOMPARE(side->tokens->index(slot, TokenTableModel::DraftColumn).data().toString(),
                 context.tokenText(step->draftTokens[static_cast<std::size_t>(slot - 1)]));
      QVERIFY(side->headline->text().contains(context.runName(step->runId)));
      QVERIFY(side->headline->text().contains(QStringLiteral("%1 of %2 drafts accepted").arg(step->acceptedCount).arg(step->draftTokens.size())));
    }
    QCOMPARE(context.step(a.step)->acceptLength(), first.acceptA);
    QCOMPARE(context.step(b.step)->acceptLength(), first.acceptB);
    QVERIFY(a.showsAttention);
    QCOMPARE(a.picture->columns(), keys);
    QVERIFY(a.pictureCaption->text().contains(QStringLiteral("attention")));
    QVERIFY(!b.showsAttention);  // B has none stored: the reference mask it ran with
    QCOMPARE(b.picture->rows(), std::int64_t{shape_.blockSize});
    QCOMPARE(b.picture->columns(), first.anchor + 1 + shape_.blockSize);
    QVERIFY(b.pictureCaption->text().contains(QStringLiteral("reference mask")));
    for (const auto* side : {&a, &b}) QTRY_VERIFY(!side->picture->isResampling() && !side->picture->sampledSize().isEmpty());
    test::saveScreenshot(&view, QStringLiteral("compare_view_block_pair"));

    // Another pair: the close-up of the old one goes.
    view.setPair(1, 0);
    QVERIFY(computed.wait(20000));
    QCOMPARE(view.blockPair()->side(0).step, session::StepId{0});
    QCOMPARE(view.lowerTabs()->currentWidget(), static_cast<QWidget*>(view.plots()));
  }

  // Every run its own colour, however many (the demo session's fifteen: the first and the
  // eleventh were both blue).
  void everyRunHasItsOwnColour() {
    for (int i = 0; i < 20; ++i)
      for (int j = i + 1; j < 20; ++j)
        QVERIFY2(!test::similarColour(TauTableModel::seriesColour(i), TauTableModel::seriesColour(j), 24),
                 qPrintable(QStringLiteral("runs %1 and %2").arg(i).arg(j)));
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
    const std::vector<analysis::ComparedSeries> series = load();
    model.setRows(series, analysis::summarizeSeries(series, 100));
    const CsvTable table = csvOf(model);
    QCOMPARE(table.header.size(), int{TauTableModel::ColumnCount});
    QCOMPARE(table.rows.size(), std::size_t{2});
    QCOMPARE(table.rows[0][0], QStringLiteral("drafter-a"));
  }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
