// The mask view as a mask explainer (no session): it draws the cells MaskLayout says, at
// most one cell per pixel, explains hovered cells, and exports. Screenshots go to
// <build>/screenshots/mask_*.png.

#include <QElapsedTimer>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QSignalSpy>
#include <QtTest>

#include "dfi/base/error.h"
#include "models/mask_layout.h"
#include "gui_test_support.h"
#include "widgets/export_options_dialog.h"
#include "widgets/fitted_plot.h"
#include "widgets/heatmap_plot.h"
#include "widgets/view_export.h"
#include "panels/mask_controls.h"
#include "panels/mask_view.h"

using dfi::analysis::LayerAttention;
using dfi::analysis::MaskVariant;
using namespace dfi::ui;

namespace {

// Waits until the plot shows the sampling of its current view.
bool waitForPicture(HeatmapPlot* plot) {
  if (!plot->isResampling()) return true;
  QSignalSpy spy(plot, &HeatmapPlot::resampled);
  return spy.wait(10000) && !plot->isResampling();
}

QColor pixelAtCell(HeatmapPlot* plot, std::int64_t row, std::int64_t column) {
  plot->replot();
  const QImage image = plot->grab().toImage();
  const QPointF p(plot->xAxis->coordToPixel(double(column)), plot->yAxis->coordToPixel(double(row)));
  return image.pixelColor(p.toPoint() * image.devicePixelRatio());
}

}  // namespace

class TestMaskView : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void drawsAllowedAndMaskedCellsInTheirColours() {
    MaskView view(nullptr);
    view.resize(1000, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.controls()->setInferenceGeometry(12, 8);
    QVERIFY(waitForPicture(view.plot()));
    QCOMPARE(view.plot()->columns(), 13 + 8);
    QCOMPARE(view.plot()->sampledSize(), QSize(21, 8));  // fewer cells than pixels: all of them
    const QColor allowed = MaskView::colour(false, kAllowed), masked = MaskView::colour(false, kMasked);
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 3, 5), allowed));   // context before the anchor
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 3, 12), masked));   // the anchor's own feature
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 0, 13 + 7), allowed));  // own block, later slot
    test::saveScreenshot(&view, QStringLiteral("mask_inference_reference"));
  }

  void diffShowsThreeColoursAndExplainsBothVariants() {
    MaskView view(nullptr);
    view.resize(1000, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.controls()->setInferenceGeometry(12, 8);
    view.controls()->setVariant(MaskVariant::Reference);
    view.controls()->setDiffAgainst(MaskVariant::BlockCausal);
    QVERIFY(waitForPicture(view.plot()));
    QVERIFY(view.maskLayout()->isDiff());
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 0, 5), MaskView::colour(true, kBothAllowed)));
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 0, 12), MaskView::colour(true, kBothMasked)));
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 0, 13 + 5), MaskView::colour(true, kDiffer)));
    const QString text = view.describeCell(0, 13 + 5);
    QVERIFY2(text.contains(QLatin1String("reference: allowed")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("block-causal: masked (a later slot of the own block")), qPrintable(text));
    QCOMPARE(view.plot()->legend->itemCount(), 3);
    test::saveScreenshot(&view, QStringLiteral("mask_inference_diff"));
  }

  void hoverNamesQueryKeyAndReason() {
    MaskView view(nullptr);
    view.resize(1000, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.controls()->setInferenceGeometry(12, 8);
    QVERIFY(waitForPicture(view.plot()));
    HeatmapPlot* plot = view.plot();
    plot->replot();
    const QPoint cell(int(plot->xAxis->coordToPixel(12)), int(plot->yAxis->coordToPixel(2)));
    QTest::mouseMove(plot, cell);
    QTRY_VERIFY(view.hoverText().contains(QLatin1String("context position 12")));
    QVERIFY2(view.hoverText().contains(QLatin1String("slot 2 at position 14")), qPrintable(view.hoverText()));
    QVERIFY2(view.hoverText().contains(QLatin1String("masked (the anchor's own target feature)")),
             qPrintable(view.hoverText()));
  }

  void slidingTrainingLayout() {
    MaskView view(nullptr);
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.controls()->setMaskLayout(MaskLayoutKind::Training);
    view.controls()->setTrainingGeometry(48, 3);
    view.controls()->setLayer(LayerAttention::Sliding, 8);
    QVERIFY(waitForPicture(view.plot()));
    QCOMPARE(view.plot()->sampledSize(), QSize(96, 48));
    // Block 1 (anchor 16) sees context 9..15 through the window of 8, not 8 and before.
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 16, 9), MaskView::colour(false, kAllowed)));
    QVERIFY(test::similarColour(pixelAtCell(view.plot(), 16, 8), MaskView::colour(false, kMasked)));
    QCOMPARE(view.plot()->rows(), 3 * 16);
    QCOMPARE(view.plot()->columns(), 48 + 3 * 16);
    test::saveScreenshot(&view, QStringLiteral("mask_training_sliding"));
  }

  // 8,192 context positions: the grid on screen never has more cells than the axis rect has
  // pixels, and zooming in resamples to exactly the visible cells.
  void largeContextIsResampledToTheViewport() {
    MaskView view(nullptr);
    view.resize(1200, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    HeatmapPlot* plot = view.plot();
    QElapsedTimer timer;
    timer.start();
    view.controls()->setInferenceGeometry(8192, 16);
    QVERIFY(waitForPicture(plot));
    const qint64 fullMs = timer.elapsed();
    QCOMPARE(plot->columns(), 8193 + 16);
    const QSize pixels = plot->axisRect()->rect().size();
    QVERIFY(plot->sampledSize().width() <= pixels.width());
    QVERIFY(plot->sampledSize().height() <= pixels.height());
    timer.restart();
    plot->xAxis->setRange(8150 - 0.5, 8150 + 59.5);  // the anchor region: 60 cells
    QVERIFY(waitForPicture(plot));
    qInfo("8k context: first picture %lld ms, zoomed resample %lld ms, grid %dx%d for %dx%d px", fullMs,
          timer.elapsed(), plot->sampledSize().width(), plot->sampledSize().height(), pixels.width(),
          pixels.height());
    QCOMPARE(plot->sampledSize(), QSize(60, 16));
    QVERIFY(test::similarColour(pixelAtCell(plot, 0, 8191), MaskView::colour(false, kAllowed)));
    QVERIFY(test::similarColour(pixelAtCell(plot, 0, 8192), MaskView::colour(false, kMasked)));
    test::saveScreenshot(&view, QStringLiteral("mask_8k_zoomed"));
  }

  // The training-layout diff of a real response, 59 anchors: the differing cells (the anchor's
  // own column, seen by the anchor-visible variant only) are outlined with markers of several
  // pixels, not a one-pixel edge, and "zoom to the differences" shows the first block's at a
  // size one can read.
  void trainingDiffOf59AnchorsIsLegible() {
    MaskView view(nullptr);
    view.resize(1000, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.controls()->setMaskLayout(MaskLayoutKind::Training);
    view.controls()->setTrainingGeometry(1024, 59);
    view.controls()->setVariant(MaskVariant::Reference);
    view.controls()->setDiffAgainst(MaskVariant::AnchorVisible);
    QVERIFY(waitForPicture(view.plot()));
    const auto& differing = view.differingCells();
    QVERIFY(!differing.empty());
    for (const auto& [r, c] : differing) QCOMPARE(view.maskLayout()->value(r, c), int{kDiffer});
    QVERIFY(view.zoomButton()->isVisible() && view.zoomButton()->isEnabled());
    // The outlines: about a 7-pixel square per differing cell, in a darker red than the cells.
    const QColor outline = MaskView::colour(true, kDiffer).darker(160);
    const auto outlinePixels = [&] {
      view.plot()->replot();
      const QImage image = view.plot()->grab().toImage();
      int n = 0;
      for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) n += test::similarColour(image.pixelColor(x, y), outline, 40);
      return n;
    };
    const int full = outlinePixels();
    QVERIFY2(full > 20 * 59, qPrintable(QString::number(full)));
    test::saveScreenshot(&view, QStringLiteral("mask_training_diff_59"));

    QVERIFY(view.zoomToDifferences());
    QVERIFY(waitForPicture(view.plot()));
    const auto [r0, c0] = differing.front();
    HeatmapPlot* plot = view.plot();
    QCOMPARE(plot->yAxis->range().size(), 16.0);  // one block's rows, both axes zoomed
    const double cellWidth = std::abs(plot->xAxis->coordToPixel(1) - plot->xAxis->coordToPixel(0));
    const double cellHeight = std::abs(plot->yAxis->coordToPixel(1) - plot->yAxis->coordToPixel(0));
    QVERIFY2(cellWidth >= 8 && cellHeight >= 8, qPrintable(QStringLiteral("%1 x %2").arg(cellWidth).arg(cellHeight)));
    QVERIFY(plot->xAxis->range().contains(double(c0)) && plot->yAxis->range().contains(double(r0)));
    QVERIFY(test::similarColour(pixelAtCell(plot, r0, c0), MaskView::colour(true, kDiffer), 40) ||
            test::similarColour(pixelAtCell(plot, r0, c0), outline, 40));
    test::saveScreenshot(&view, QStringLiteral("mask_training_diff_59_zoomed"));
  }

  // Titles and axis labels in a narrow, short panel: wrapped inside the plot, never cut at
  // both ends ("raining layout ... B = 1"); the full text stays the owner's.
  void titleAndLabelsFitANarrowPanel() {
    MaskView view(nullptr);
    view.resize(560, 330);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.controls()->setMaskLayout(MaskLayoutKind::Training);
    view.controls()->setTrainingGeometry(1024, 59);
    view.controls()->setDiffAgainst(MaskVariant::AnchorVisible);
    QVERIFY(waitForPicture(view.plot()));
    HeatmapPlot* plot = view.plot();
    plot->replot();
    auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
    QVERIFY(title);
    const QString full = FittedPlot::fullText(title);
    QVERIFY2(full.startsWith(QLatin1String("training layout")) && full.endsWith(QStringLiteral("B\u00a0=\u00a016")), qPrintable(full));
    QString shown = title->text();
    QCOMPARE(shown.replace(QLatin1Char('\n'), QLatin1Char(' ')), full);  // every word, on more lines
    const QRect inside = QFontMetrics(title->font()).boundingRect(title->rect(), Qt::AlignCenter, title->text());
    QVERIFY2(plot->rect().contains(inside), qPrintable(QStringLiteral("%1,%2 %3x%4 in %5").arg(inside.x()).arg(inside.y())
                                                         .arg(inside.width()).arg(inside.height()).arg(plot->width())));
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
      const int length = axis->orientation() == Qt::Horizontal ? plot->axisRect()->width() : plot->axisRect()->height();
      for (const QString& line : axis->label().split(QLatin1Char('\n')))
        QVERIFY2(QFontMetrics(axis->labelFont()).horizontalAdvance(line) <= length,
                 qPrintable(QStringLiteral("'%1' in %2 px").arg(line).arg(length)));
    }
    QCOMPARE(FittedPlot::fullText(plot->yAxis), QStringLiteral("query row (block x B + slot)"));
    test::saveScreenshot(&view, QStringLiteral("mask_narrow_title"));
    // Wide again: one line.
    view.resize(1600, 600);
    QTRY_VERIFY(plot->width() > 1200);
    plot->replot();
    QCOMPARE(title->text(), full);
  }

  // A heatmap in an SVG: as rectangles when the view holds few cells, else as one image of one
  // pixel per cell (not the screen's sampling of a few hundred pixels); PNG at a chosen size
  // and dpi.
  void svgHoldsTheCellsAtFullResolution() {
    MaskView view(nullptr);
    view.resize(900, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.controls()->setMaskLayout(MaskLayoutKind::Training);
    view.controls()->setTrainingGeometry(2048, 64);  // 1024 x 3072 cells
    QVERIFY(waitForPicture(view.plot()));
    QVERIFY(view.plot()->sampledSize().width() < 3072);  // on screen: sampled
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("big.svg"));
    exportWidget(view.exportTarget(), path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray svg = file.readAll();
    const QRegularExpression embedded(QStringLiteral("data:image/png;base64,([A-Za-z0-9+/=\\s]+)"));
    QRegularExpressionMatchIterator images = embedded.globalMatch(QString::fromLatin1(svg));
    QSize largest;
    while (images.hasNext()) {
      QByteArray base64 = images.next().captured(1).toLatin1();
      base64.replace('\n', "").replace(' ', "");
      const QImage image = QImage::fromData(QByteArray::fromBase64(base64), "PNG");
      if (image.width() * image.height() > largest.width() * largest.height()) largest = image.size();
    }
    QCOMPARE(largest, QSize(3072, 1024));
    QVERIFY(!view.plot()->isVectorExport());  // back to the screen's picture

    // A few cells: rectangles.
    view.controls()->setMaskLayout(MaskLayoutKind::Inference);
    view.controls()->setInferenceGeometry(12, 8);
    QVERIFY(waitForPicture(view.plot()));
    const QString small = dir.filePath(QStringLiteral("small.svg"));
    exportWidget(view.exportTarget(), small, {QSize(1200, 600), 144});
    QFile smallFile(small);
    QVERIFY(smallFile.open(QIODevice::ReadOnly));
    const QByteArray vectors = smallFile.readAll();
    QVERIFY(!vectors.contains("<image"));
    QVERIFY(vectors.contains(MaskView::colour(false, kAllowed).name().toLatin1()));

    const QString png = dir.filePath(QStringLiteral("print.png"));
    exportWidget(view.exportTarget(), png, {QSize(2400, 1200), 300});
    const QImage print(png);
    QCOMPARE(print.size(), QSize(2400, 1200));
    QVERIFY(std::abs(print.dotsPerMeterX() * 0.0254 - 300) < 1);
    QVERIFY_THROWS_EXCEPTION(dfi::UsageError, exportWidget(view.exportTarget(), png, {QSize(2400, 1200), 0}));
  }

  // Save Picture / File > Export ask for the size and resolution: the panel's size at the last
  // resolution used; a new resolution scales the pixels (same layout, sharper).
  void exportDialogStartsAtTheViewsSize() {
    QSettings().remove(QStringLiteral("export/dpi"));
    MaskView view(nullptr);
    view.resize(900, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QSize onScreen = view.exportTarget()->size();
    ExportOptionsDialog dialog(view.exportTarget());
    QCOMPARE(dialog.options().size, onScreen);
    QCOMPARE(dialog.options().dpi, 96.0);
    dialog.dpiBox()->setValue(192);
    QCOMPARE(dialog.options().size, onScreen * 2);
    dialog.accept();
    ExportOptionsDialog again(view.exportTarget());
    QCOMPARE(again.options().dpi, 192.0);
    QCOMPARE(again.options().size, onScreen * 2);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("sharp.png"));
    exportWidget(view.exportTarget(), path, again.options());
    QCOMPARE(QImage(path).size(), onScreen * 2);
    QCOMPARE(askExportOptions(view.exportTarget(), dir.filePath(QStringLiteral("cells.csv")), nullptr)->size, QSize());
    QSettings().remove(QStringLiteral("export/dpi"));
  }

  // Named ticks (the statistics overview's tensor names) turn upright when they would run into
  // each other, and lie flat again when there is room.
  void crowdedNamedTicksTurnUpright() {
    FittedPlot plot;
    auto names = QSharedPointer<QCPAxisTickerText>::create();
    for (int i = 0; i < 12; ++i) names->addTick(i, QStringLiteral("drafter layer %1\n(hidden_norm)").arg(i));
    plot.xAxis->setTicker(names);
    plot.xAxis->setRange(-0.5, 11.5);
    plot.resize(500, 300);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.replot();
    QCOMPARE(plot.xAxis->tickLabelRotation(), -90.0);
    plot.resize(2400, 300);
    QTRY_COMPARE(plot.width(), 2400);
    plot.replot();
    QCOMPARE(plot.xAxis->tickLabelRotation(), 0.0);
  }

  void exportsPngSvgAndPdf() {
    MaskView view(nullptr);
    view.resize(900, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(waitForPicture(view.plot()));
    QTemporaryDir dir;
    for (const char* suffix : {"png", "svg", "pdf"}) {
      const QString path = dir.filePath(QStringLiteral("mask.") + QLatin1String(suffix));
      exportWidget(view.exportTarget(), path);
      QVERIFY(QFileInfo(path).size() > 200);
    }
    QFile svg(dir.filePath(QStringLiteral("mask.svg")));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("<svg"));
    QCOMPARE(QImage(dir.filePath(QStringLiteral("mask.png"))).width(), view.plot()->width());
    QVERIFY_THROWS_EXCEPTION(dfi::Error, exportWidget(view.exportTarget(), dir.filePath(QStringLiteral("mask.bmpx"))));

    // The cells as CSV: one row per query slot, one column per key, labelled like the axis.
    view.controls()->setInferenceGeometry(12, 8);
    const CsvTable cells = view.exportData();
    QCOMPARE(cells.header.size(), 1 + 13 + 8);
    QCOMPARE(cells.header.back(), QStringLiteral("s7"));
    QCOMPARE(cells.rows.size(), std::size_t{8});
    QCOMPARE(cells.rows[3][1 + 5], QString::number(kAllowed));   // context before the anchor
    QCOMPARE(cells.rows[3][1 + 12], QString::number(kMasked));   // the anchor's own feature
    // An 8k-position training mask is far too big for a table: an error, not a 1 GB file.
    view.controls()->setMaskLayout(MaskLayoutKind::Training);
    view.controls()->setTrainingGeometry(8192, 512);
    QVERIFY_THROWS_EXCEPTION(dfi::UsageError, view.exportData());
  }
};

QTEST_MAIN(TestMaskView)
#include "test_mask_view.moc"
