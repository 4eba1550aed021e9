#include <QDockWidget>
#include <QMenuBar>
#include <QtTest>

#include "windows/main_window.h"

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void showsWithMenusAndIcon() {
    dfi::ui::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QStringList menus;
    for (QAction* a : window.menuBar()->actions()) menus << a->text();
    QCOMPARE(menus, (QStringList{"&File", "&View", "&Go", "&Help"}));
    QVERIFY(!window.windowIcon().isNull());  // the icon resource is compiled in
    // Every panel is a dock with a stable name (saved layouts refer to it) and a View toggle.
    QStringList docks;
    for (QDockWidget* dock : window.findChildren<QDockWidget*>()) docks << dock->objectName();
    docks.sort();
    QCOMPARE(docks, (QStringList{"AttentionDock", "CompareDock", "DiagnosisDock", "LogDock", "MaskDock", "NavigatorDock",
                                 "OverviewDock", "PositionsDock", "StatsDock", "TokenDock", "TreeDock", "WhatIfDock"}));
    QMenu* view = window.menuBar()->actions()[1]->menu();
    QStringList viewItems;
    for (QAction* a : view->actions()) viewItems << a->text();
    QVERIFY(viewItems.contains("Navigator"));
    QVERIFY(viewItems.contains("&Reset Layout"));
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
