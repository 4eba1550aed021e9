// ReloadWhenShown, the reload-while-on-screen state of the panels that read the session on a
// worker (overview, compare, diagnosis, positions): a request reloads a panel on screen at
// once and a hidden one once it is shown; a panel moved out of its window (a dock behind
// another tab) reloads once it is painted there again; appended steps wait for the timer,
// which each append restarts (Debounce) or does not (Throttle).

#include <chrono>

#include <QTimer>
#include <QWidget>
#include <QtTest>

#include "gui_test_support.h"
#include "session/reload_when_shown.h"

using namespace dfi::ui;
using namespace std::chrono_literals;

class TestReloadWhenShown : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { test::isolateSettings(); }

  void hiddenPanelReloadsWhenShown() {
    QWidget panel;
    int reloads = 0;
    auto* reloader = new ReloadWhenShown(&panel, [&] { ++reloads; });
    reloader->request();
    QCOMPARE(reloads, 0);
    QVERIFY(reloader->isStale());
    panel.show();
    QCOMPARE(reloads, 1);  // on the Show event itself
    QVERIFY(!reloader->isStale());
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    reloader->request();
    QCOMPARE(reloads, 2);  // on screen: at once
  }

  void panelOutOfItsWindowReloadsWhenPaintedThere() {
    QWidget window;
    window.resize(200, 200);
    auto* panel = new QWidget(&window);
    panel->setGeometry(0, 0, 100, 100);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    int reloads = 0;
    auto* reloader = new ReloadWhenShown(panel, [&] { ++reloads; });
    panel->move(1000, 1000);  // still visible, but none of it on screen
    QVERIFY(panel->isVisible());
    QVERIFY(!reloader->onScreen());
    reloader->request();
    QVERIFY(reloader->isStale());
    panel->move(0, 0);
    panel->repaint();
    QCOMPARE(reloads, 0);  // not within the paint: after it
    QTRY_COMPARE(reloads, 1);
    QVERIFY(!reloader->isStale());
    panel->repaint();
    QTest::qWait(50);
    QCOMPARE(reloads, 1);
  }

  void appendedStepsReloadAfterTheInterval() {
    QWidget panel;
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    int reloads = 0;
    auto* reloader = new ReloadWhenShown(
        &panel, [&] { ++reloads; }, ReloadWhenShown::Pace::Debounce, 50ms);
    reloader->requestSoon();
    QCOMPARE(reloads, 0);
    QTRY_COMPARE(reloads, 1);
    QVERIFY(!reloader->timer()->isActive());
  }

  void appendedStepsOnAHiddenPanelWaitForItToBeShown() {
    QWidget panel;
    int reloads = 0;
    auto* reloader = new ReloadWhenShown(
        &panel, [&] { ++reloads; }, ReloadWhenShown::Pace::Throttle, 20ms);
    reloader->requestSoon();
    QTRY_VERIFY(reloader->isStale());
    QCOMPARE(reloads, 0);
    panel.show();
    QCOMPARE(reloads, 1);
  }

  void clearForgetsTheDueReload() {
    QWidget panel;
    int reloads = 0;
    auto* reloader = new ReloadWhenShown(
        &panel, [&] { ++reloads; }, ReloadWhenShown::Pace::Debounce, 20ms);
    reloader->request();
    reloader->requestSoon();
    reloader->clear();
    QVERIFY(!reloader->isStale());
    QVERIFY(!reloader->timer()->isActive());
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTest::qWait(100);
    QCOMPARE(reloads, 0);
  }

  // An append while the timer runs restarts it (Debounce) or leaves it running (Throttle).
  void debounceRestartsTheTimerThrottleDoesNot() {
    for (const auto pace : {ReloadWhenShown::Pace::Debounce, ReloadWhenShown::Pace::Throttle}) {
      QWidget panel;
      auto* reloader = new ReloadWhenShown(
          &panel, [] {}, pace, 10s);
      // A coarse timer restarted may keep its rounded deadline.
      reloader->timer()->setTimerType(Qt::PreciseTimer);
      reloader->requestSoon();
      QTest::qWait(300);
      const int before = reloader->timer()->remainingTime();
      reloader->requestSoon();
      const int after = reloader->timer()->remainingTime();
      if (pace == ReloadWhenShown::Pace::Debounce)
        QVERIFY2(after > before, qPrintable(QStringLiteral("%1 -> %2 ms").arg(before).arg(after)));
      else
        QVERIFY2(after <= before, qPrintable(QStringLiteral("%1 -> %2 ms").arg(before).arg(after)));
    }
  }
};

QTEST_MAIN(TestReloadWhenShown)
#include "test_reload_when_shown.moc"
