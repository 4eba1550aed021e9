// Headless rendering (dflash-inspector --render, dflash-eval render): every view of a block
// becomes a file, the mask diff shows the anchor column that anchor-visible adds, and bad
// requests end with an exit code, not a crash.

#include <array>

#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "dfi/base/error.h"
#include "gui_test_support.h"
#include "models/mask_layout.h"
#include "models/tau_table_model.h"
#include "session_fixture.h"
#include "panels/mask_view.h"
#include "windows/render.h"

using namespace dfi::ui;

class TestRender : public QObject {
  Q_OBJECT
 private slots:
  void writesEveryViewOfABlock() {
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("s.dfi"));
    dfi::fixture::writeFixtureFile(session.toStdString());
    const QString out = dir.filePath(QStringLiteral("renders"));
    QCOMPARE(renderViews({session, renderableViews(), std::nullopt, out, QStringLiteral("png")}), 0);
    for (const QString& view : renderableViews()) {
      const QImage image(out + "/" + view + ".png");
      QVERIFY2(!image.isNull() && image.width() > 200, qPrintable(view));
    }
    // Reference vs anchor-visible differ in exactly the anchor's column: red must be there.
    const QImage diff(out + "/mask-diff.png");
    int differ = 0;
    for (int y = 0; y < diff.height(); ++y)
      for (int x = 0; x < diff.width(); ++x)
        differ += test::similarColour(diff.pixelColor(x, y), MaskView::colour(true, kDiffer));
    QVERIFY2(differ > 100, qPrintable(QString::number(differ)));
  }

  // --size and --dpi: plots and windows are exactly the pixels asked for, other panels that
  // wide, every PNG tagged with the resolution; the view is laid out at size x 96 / dpi.
  void rendersAtAChosenSizeAndDpi() {
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("s.dfi"));
    dfi::fixture::writeFixtureFile(session.toStdString());
    const QString out = dir.filePath(QStringLiteral("renders"));
    RenderRequest request{session, renderableViews(), std::nullopt, out, QStringLiteral("png")};
    request.picture = {QSize(1600, 1000), 192};
    QCOMPARE(renderViews(request), 0);
    for (const QString& view : renderableViews()) {
      const QImage image(out + "/" + view + ".png");
      QVERIFY2(!image.isNull(), qPrintable(view));
      QVERIFY2(image.width() == 1600, qPrintable(QStringLiteral("%1: %2 wide").arg(view).arg(image.width())));
      QVERIFY2(std::abs(image.dotsPerMeterX() * 0.0254 - 192) < 1, qPrintable(view));
    }
    for (const char* view : {"mask", "mask-diff", "mask-training-diff", "window", "compare", "attention"})
      QVERIFY2(QImage(out + "/" + view + ".png").size() == QSize(1600, 1000), view);
    // The statistics panel is resized as a window; the platform leaves it a few pixels short.
    QVERIFY(std::abs(QImage(out + "/statistics.png").height() - 1000) <= 30);

    // SVG: the mask's cells as vector rectangles in their colours, no picture of them.
    request.views = {QStringLiteral("mask-diff")};
    request.format = QStringLiteral("svg");
    QCOMPARE(renderViews(request), 0);
    QFile svg(out + "/mask-diff.svg");
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray text = svg.readAll();
    // 1600 px at 192 dpi: 8.33 inches wide, laid out at 800 x 500.
    QVERIFY2(text.contains("width=\"211.667mm\"") && text.contains("viewBox=\"0 0 800 500\""), text.left(300).constData());
    for (int value : {kBothMasked, kBothAllowed, kDiffer})
      QVERIFY2(text.contains(MaskView::colour(true, value).name().toLatin1()), qPrintable(MaskView::colour(true, value).name()));
    QVERIFY(!text.contains("<image"));

    QVERIFY_THROWS_EXCEPTION(dfi::UsageError, parseExportSize(QStringLiteral("1600by1000")));
    QCOMPARE(parseExportSize(QStringLiteral("800x600")), QSize(800, 600));
    request.picture.dpi = 5;  // nonsense: an error, not a 1-pixel picture
    QCOMPARE(renderViews(request), 2);
  }

  // --view positions: the selected block's run (the fixture's first) drawn in the first series
  // colour in all three plots, and the reliability diagram's grey dashed diagonal.
  void rendersThePositionsView() {
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("s.dfi"));
    dfi::fixture::writeFixtureFile(session.toStdString());
    const QString out = dir.filePath(QStringLiteral("renders"));
    QCOMPARE(renderViews({session, {QStringLiteral("positions")}, std::nullopt, out, QStringLiteral("png")}), 0);
    const QImage image(out + "/positions.png");
    QVERIFY(!image.isNull());
    std::array<int, 3> curve{};  // pixels of the run's colour in each third of the picture
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x)
        if (test::similarColour(image.pixelColor(x, y), TauTableModel::seriesColour(0)))
          ++curve[static_cast<std::size_t>(std::min(2, 3 * x / image.width()))];
    for (int third = 0; third < 3; ++third)
      QVERIFY2(curve[static_cast<std::size_t>(third)] > 50, qPrintable(QString::number(curve[static_cast<std::size_t>(third)])));
  }

  void badRequestsEndWithAnExitCode() {
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("s.dfi"));
    dfi::fixture::writeFixtureFile(session.toStdString());
    QCOMPARE(renderViews({session, {QStringLiteral("nope")}, std::nullopt, dir.path(), QStringLiteral("png")}), 2);
    QCOMPARE(renderViews({dir.filePath(QStringLiteral("missing.dfi")), {QStringLiteral("mask")}, std::nullopt,
                          dir.path(), QStringLiteral("png")}),
             4);
    QCOMPARE(renderViews({session, {QStringLiteral("mask")}, 999999, dir.path(), QStringLiteral("png")}), 4);
  }
};

QTEST_MAIN(TestRender)
#include "test_render.moc"
