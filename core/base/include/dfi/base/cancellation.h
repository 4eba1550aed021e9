#pragma once
// A request to stop, set from one thread (Ctrl-C, a "cancel" request) and polled by the work on
// another, which then throws dfi::CancelledError and keeps what it has recorded.

#include <atomic>

namespace dfi {

class CancellationToken {
 public:
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace dfi
