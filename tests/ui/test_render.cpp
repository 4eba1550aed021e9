// Headless rendering (dflash-inspector --render, dflash-eval render): every view of a block
// becomes a file, the mask diff shows the anchor column that anchor-visible adds, and bad
// requests end with an exit code, not a crash.

#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_support.h"
#include "models/mask_layout.h"
#include "session_fixture.h"
#include "windows/mask_view.h"
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
