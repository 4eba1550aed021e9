#include "session/reload_when_shown.h"

#include <utility>

#include <QEvent>
#include <QMetaObject>
#include <QTimer>
#include <QWidget>

namespace dfi::ui {

ReloadWhenShown::ReloadWhenShown(QWidget* panel, std::function<void()> reload, Pace pace,
                                 std::chrono::milliseconds interval)
    : QObject(panel),
      panel_(panel),
      reload_(std::move(reload)),
      timer_(new QTimer(this)),
      pace_(pace) {
  timer_->setSingleShot(true);
  timer_->setInterval(interval);
  connect(timer_, &QTimer::timeout, this, &ReloadWhenShown::request);
  panel_->installEventFilter(this);
}

void ReloadWhenShown::request() {
  if (onScreen()) {
    run();
  } else {
    stale_ = true;
  }
}

void ReloadWhenShown::requestSoon() {
  if (pace_ == Pace::Debounce || !timer_->isActive()) timer_->start();
}

void ReloadWhenShown::clear() {
  timer_->stop();
  stale_ = false;
}

bool ReloadWhenShown::onScreen() const {
  return panel_->isVisible() && !panel_->visibleRegion().isEmpty();
}

// The panel's reload clears too (it is also called directly); clearing here first keeps a
// reload that forgot to from running again on every paint.
void ReloadWhenShown::run() {
  clear();
  reload_();
}

void ReloadWhenShown::runIfStale() {
  if (stale_) run();
}

bool ReloadWhenShown::eventFilter(QObject* watched, QEvent* event) {
  if (watched == panel_ && stale_) {
    if (event->type() == QEvent::Show) {
      run();
    } else if (event->type() == QEvent::Paint) {
      // A tab brought forward is painted, not shown again: the moment to read what changed,
      // once the paint is over (a reload changes the widgets being painted).
      QMetaObject::invokeMethod(this, &ReloadWhenShown::runIfStale, Qt::QueuedConnection);
    }
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace dfi::ui
