#pragma once
// When a panel that reads the session on a worker thread (overview, compare, diagnosis,
// positions) reloads: only while it is on screen, since behind its tab it would slow the
// opening of a big session. A reload asked for while the panel is hidden is remembered (the
// panel is stale) and run when the panel comes forward; the steps of a followed file are
// gathered by a timer into one reload. The panel keeps its reload(), which calls clear().

#include <chrono>
#include <functional>

#include <QObject>

class QTimer;
class QWidget;

namespace dfi::ui {

class ReloadWhenShown : public QObject {
 public:
  // How requestSoon() gathers appended steps: Debounce reloads once the file has been quiet
  // for the interval; Throttle at most once per interval while steps keep arriving (so a
  // steadily written file is not held back until the engine pauses).
  enum class Pace { Debounce, Throttle };

  // Watches `panel` (and is its child); `reload` is the panel's reload.
  ReloadWhenShown(QWidget* panel, std::function<void()> reload, Pace pace = Pace::Debounce,
                  std::chrono::milliseconds interval = std::chrono::seconds(2));

  // Reloads now when the panel is on screen; otherwise marks it stale, to reload when shown.
  void request();
  // Steps arrived: request() after the interval, paced as chosen.
  void requestSoon();
  // Forgets a due reload: the panel is reloading now, or the session closed.
  void clear();
  // A reload is due for when the panel comes forward.
  bool isStale() const { return stale_; }
  // Behind another tab the panel is still "visible" (Qt moves the docks behind out of the
  // window); what is on screen has a visible region.
  bool onScreen() const;
  // The timer that paces requestSoon(): active while a reload is pending.
  QTimer* timer() const { return timer_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void run();
  void runIfStale();

  QWidget* panel_;
  std::function<void()> reload_;
  QTimer* timer_;
  Pace pace_;
  bool stale_ = false;
};

}  // namespace dfi::ui
