// The main window on a small screen (1280x720, the offscreen platform configured by
// screen_1280x720.json): it fits, every dock shows its essential widgets when raised, a saved
// geometry from a larger screen is brought back onto this one, and on a large window the log
// dock stays small. Screenshots: <build>/screenshots/layout_720p_*.png.

#include <QDockWidget>
#include <QScreen>
#include <QComboBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QTableView>
#include <QTreeView>
#include <QtTest>

#include "gui_test_support.h"
#include "models/navigator_model.h"
#include "session_fixture.h"
#include "widgets/comparison_plots.h"
#include "widgets/fitted_plot.h"
#include "widgets/heatmap_plot.h"
#include "widgets/token_strip.h"
#include "widgets/tree_canvas.h"
#include "panels/attention_view.h"
#include "panels/compare_view.h"
#include "panels/log_dock.h"
#include "windows/main_window.h"
#include "panels/mask_controls.h"
#include "panels/mask_view.h"
#include "panels/navigator.h"
#include "panels/overview_view.h"
#include "panels/stats_view.h"
#include "panels/token_view.h"
#include "panels/tree_view.h"

using namespace dfi::ui;

namespace {

constexpr int kScreenWidth = 1280;
constexpr int kScreenHeight = 720;

// The part of `widget` a user sees: its rectangle clipped by every scroll area and widget
// above it, in window coordinates.
QRect visiblePart(const QWidget* widget) {
  QRect r(widget->mapTo(widget->window(), QPoint(0, 0)), widget->size());
  for (const QWidget* w = widget->parentWidget(); w && !w->isWindow(); w = w->parentWidget())
    r &= QRect(w->mapTo(w->window(), QPoint(0, 0)), w->size());
  return r & widget->window()->rect();
}

// Visible enough to use: shown, and at least `minWidth` x `minHeight` of it on screen (or all
// of it when it is smaller).
bool usable(const QWidget* widget, int minWidth, int minHeight, QString* why) {
  if (!widget->isVisible()) {
    *why = QStringLiteral("%1 is hidden").arg(widget->metaObject()->className());
    return false;
  }
  const QRect part = visiblePart(widget);
  if (part.width() >= std::min(minWidth, widget->width()) && part.height() >= std::min(minHeight, widget->height()))
    return true;
  *why = QStringLiteral("%1 shows %2x%3 of %4x%5")
             .arg(widget->metaObject()->className())
             .arg(part.width())
             .arg(part.height())
             .arg(widget->width())
             .arg(widget->height());
  return false;
}

// Shows `window` with the session at `path` open and its navigator loaded (a failed check
// ends the calling test: see QTest::currentTestFailed).
void showWithSession(MainWindow& window, const QString& path) {
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  QVERIFY(window.openFile(path));
  QTRY_VERIFY(!window.navigator()->model()->isLoading());
}

// Selects step `step` of the first run's first prompt in the navigator.
void selectStep(MainWindow& window, int step) {
  QTreeView* tree = window.navigator()->tree();
  tree->expandAll();
  const QAbstractItemModel* shown = tree->model();
  tree->setCurrentIndex(shown->index(step, 0, shown->index(0, 0, shown->index(0, 0))));
}

}  // namespace

class TestLayout : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;

 private slots:
  void initTestCase() {
    test::isolateSettings();
    QSettings().clear();
    QCOMPARE(QGuiApplication::primaryScreen()->size(), QSize(kScreenWidth, kScreenHeight));
    path_ = dir_.filePath(QStringLiteral("session.dfi"));
    dfi::fixture::writeFixtureFile(path_.toStdString());
  }

  void fitsAndShowsEveryDocksEssentials() {
    MainWindow window;
    showWithSession(window, path_);
    if (QTest::currentTestFailed()) return;
    selectStep(window, 1);

    QVERIFY2(window.minimumSizeHint().height() <= 700, qPrintable(QString::number(window.minimumSizeHint().height())));
    QVERIFY2(window.minimumSizeHint().width() <= kScreenWidth, qPrintable(QString::number(window.minimumSizeHint().width())));
    const QRect available = window.screen()->availableGeometry();
    QVERIFY2(available.contains(window.geometry()), qPrintable(QStringLiteral("%1,%2 %3x%4")
                                                                    .arg(window.x())
                                                                    .arg(window.y())
                                                                    .arg(window.width())
                                                                    .arg(window.height())));

    // What each dock is for, per dock: the widget and how much of it must show.
    struct Essential {
      const char* dock;
      QWidget* widget;
      int minWidth, minHeight;
    };
    const std::vector<Essential> essentials = {
        {"NavigatorDock", window.navigator()->searchField(), 150, 15},
        {"NavigatorDock", window.navigator()->tree(), 250, 150},
        {"TokenDock", window.tokenView()->table(), 300, 100},
        {"TokenDock", window.tokenView()->strip(), 300, 30},
        {"MaskDock", window.maskView()->plot(), 250, 150},
        {"MaskDock", window.maskView()->controls(), 150, 100},
        {"TreeDock", window.treeView()->canvas(), 200, 100},
        {"AttentionDock", window.attentionView()->fetchButton(), 60, 15},
        {"AttentionDock", window.attentionView()->plot(), 250, 150},
        {"StatsDock", window.statsView()->tensorBox(), 100, 15},
        {"StatsDock", window.statsView()->curves(), 250, 140},
        {"CompareDock", window.compareView()->regressionTable(), 250, 80},
        {"CompareDock", window.compareView()->plots()->histogram(), 200, 120},
        {"OverviewDock", window.overviewView()->browser(), 300, 150},
        {"LogDock", window.logDock()->findChild<QPlainTextEdit*>(), 300, 60},
    };
    QStringList failures;
    for (const Essential& e : essentials) {
      auto* dock = window.findChild<QDockWidget*>(QLatin1String(e.dock));
      QVERIFY2(dock && e.widget, e.dock);
      dock->raise();
      QTest::qWait(50);  // a tab brought forward is laid out by queued layout requests
      QString why;
      if (!usable(e.widget, e.minWidth, e.minHeight, &why)) failures << QStringLiteral("%1: %2").arg(QLatin1String(e.dock), why);
      test::saveScreenshot(&window, QStringLiteral("layout_720p_%1").arg(QLatin1String(e.dock)));
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
  }

  // On this laptop-sized screen the analysis views are tabs beside the tokens, so the tokens'
  // table shows every slot of a block of 16 without a splitter dragged or a scroll.
  void aBlockOfSixteenShowsEverySlot() {
    const QString path = dir_.filePath(QStringLiteral("b16.dfi"));
    dfi::fixture::writeFixtureFile(path.toStdString(), {.prompts = 1, .stepsPerPrompt = 2, .blockSize = 16});
    MainWindow window;
    showWithSession(window, path);
    if (QTest::currentTestFailed()) return;
    auto* tokens = window.findChild<QDockWidget*>(QStringLiteral("TokenDock"));
    // The default layout is applied once the window is shown (a queued call).
    for (const char* name : {"MaskDock", "TreeDock", "AttentionDock", "StatsDock"})
      QTRY_VERIFY2(window.tabifiedDockWidgets(tokens).contains(window.findChild<QDockWidget*>(QLatin1String(name))), name);
    selectStep(window, 0);
    tokens->raise();
    QTest::qWait(50);
    const QTableView* table = window.tokenView()->table();
    QTRY_COMPARE(table->model()->rowCount(), 16);  // the anchor and 15 draft slots
    const QRect last = table->visualRect(table->model()->index(15, 0));
    QVERIFY2(last.bottom() < table->viewport()->height(),
             qPrintable(QStringLiteral("slot 15 ends at %1 of a %2-pixel table").arg(last.bottom()).arg(table->viewport()->height())));
    test::saveScreenshot(&window, QStringLiteral("layout_720p_block16"));
  }

  // Two runs whose names differ only at the end stay told apart in a narrow plot's legend (the
  // ends were cut: "drafter-anchor-visible/diag" beside "drafter-anchor-visible/di"), in a font
  // as large as the rest; given the room, the full names come back.
  void legendsNameRunsDistinctly() {
    QCustomPlot* plot = makeLegendPlot(QStringLiteral("Acceptance length"), QStringLiteral("length"), QStringLiteral("steps"));
    const QStringList names{QStringLiteral("drafter-anchor-visible/diagnosis/baseline/live/reference"),
                            QStringLiteral("drafter-anchor-visible/diagnosis/mask:anchor-visible/live/reference")};
    for (const QString& name : names) {
      QCPGraph* g = plot->addGraph();
      g->setName(name);
      g->addData(1, 1);
    }
    plot->legend->setVisible(true);
    plot->resize(280, 240);
    plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(plot));
    plot->replot();
    QVERIFY(plot->legend->font().pointSizeF() >= 9);
    const QString shown0 = plot->graph(0)->name(), shown1 = plot->graph(1)->name();
    QVERIFY2(shown0 != shown1, qPrintable(shown0));
    QVERIFY2(shown1.contains(QChar(0x2026)) && shown1.endsWith(QStringLiteral("/live/reference")), qPrintable(shown1));
    QCOMPARE(plot->legend->columnCount(), 1);  // two columns would leave each name a few characters
    const int legendRight = plot->legend->outerRect().right();
    QVERIFY2(legendRight <= plot->width(), qPrintable(QStringLiteral("%1 > %2").arg(legendRight).arg(plot->width())));
    QCOMPARE(FittedPlot::fullText(plot->graph(1)), names[1]);
    plot->resize(1600, 240);
    plot->replot();
    QCOMPARE(plot->graph(1)->name(), names[1]);
    QCOMPARE(plot->legend->columnCount(), 2);
    delete plot;
  }

  // No text under 9 points anywhere in the window: widgets, and the plots' legends, axes and
  // titles, which QCustomPlot draws with fonts of its own.
  void noTextUnderNinePoints() {
    MainWindow window;
    showWithSession(window, path_);
    if (QTest::currentTestFailed()) return;
    selectStep(window, 0);
    QStringList small;
    auto check = [&](const QString& what, const QFont& font) {
      if (font.pointSizeF() > 0 && font.pointSizeF() < 9) small << QStringLiteral("%1: %2 pt").arg(what).arg(font.pointSizeF());
    };
    for (QDockWidget* dock : window.findChildren<QDockWidget*>()) {
      dock->raise();
      QTest::qWait(20);
    }
    for (const QWidget* w : window.findChildren<QWidget*>())
      if (w->isVisible()) check(QString::fromLatin1(w->metaObject()->className()) + QLatin1Char(' ') + w->objectName(), w->font());
    for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) {
      const QString where = plot->parentWidget() ? QString::fromLatin1(plot->parentWidget()->metaObject()->className()) : QString();
      check(where + QStringLiteral(" legend"), plot->legend->font());
      for (QCPAxis* axis : plot->axisRect()->axes()) {
        check(where + QStringLiteral(" axis label"), axis->labelFont());
        check(where + QStringLiteral(" tick labels"), axis->tickLabelFont());
      }
      for (QCPLayoutElement* e : plot->plotLayout()->elements(true))
        if (auto* title = qobject_cast<QCPTextElement*>(e)) check(where + QStringLiteral(" title"), title->font());
    }
    small.removeDuplicates();
    QVERIFY2(small.isEmpty(), qPrintable(small.join('\n')));
  }

  // A geometry saved on a 1600x1264 screen does not put the window off this one.
  void savedGeometryIsClampedToTheScreen() {
    {
      MainWindow big;
      big.setGeometry(200, 150, 1600, 1264);
      big.close();  // saves geometry and layout
    }
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.screen()->availableGeometry().contains(window.frameGeometry()));
    QSettings().clear();
  }

  // However tall the window, the log dock keeps its own height, and however wide, the
  // navigator its width; the panels take the rest.
  void theLogAndTheNavigatorNeverTakeTheStretch() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTest::qWait(50);  // the default proportions are applied once shown
    auto* navigator = window.findChild<QDockWidget*>(QStringLiteral("NavigatorDock"));
    const int logBefore = window.logDock()->height();
    const int navigatorBefore = navigator->width();
    window.resize(3000, 2100);  // a 4K-sized window (larger than this screen: only layout)
    QTRY_VERIFY(window.height() > 1500);
    QTest::qWait(50);
    QVERIFY2(window.logDock()->height() <= logBefore + 2,
             qPrintable(QStringLiteral("log %1 of %2").arg(window.logDock()->height()).arg(window.height())));
    QVERIFY2(navigator->width() <= navigatorBefore + 2,
             qPrintable(QStringLiteral("navigator %1 of %2").arg(navigator->width()).arg(window.width())));
  }
};

// The screen is the configured 1280x720 one, whatever QT_QPA_PLATFORM ctest set.
int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" DFI_SOURCE_DIR "/tests/ui/screen_1280x720.json");
  QApplication app(argc, argv);
  TestLayout test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_layout.moc"
