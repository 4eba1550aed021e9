#include <QMenuBar>
#include <QtTest>

#include "windows/main_window.h"

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void showsWithMenusAndIcon() {
    dfi::ui::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QStringList menus;
    for (QAction* a : window.menuBar()->actions()) menus << a->text();
    QCOMPARE(menus, (QStringList{"&File", "&View", "&Help"}));
    QVERIFY(!window.windowIcon().isNull());  // the icon resource is compiled in
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
