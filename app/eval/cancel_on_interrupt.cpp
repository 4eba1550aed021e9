#include "cancel_on_interrupt.h"

#include <csignal>

namespace dfi::eval {
namespace {

// A signal handler reaches the token only through a global; CancellationToken's flag is atomic.
CancellationToken* activeToken = nullptr;

void onInterrupt(int) {
  if (activeToken) activeToken->cancel();
}

}  // namespace

CancelOnInterrupt::CancelOnInterrupt(CancellationToken& token) {
  activeToken = &token;
  std::signal(SIGINT, onInterrupt);
}

CancelOnInterrupt::~CancelOnInterrupt() {
  std::signal(SIGINT, SIG_DFL);
  activeToken = nullptr;
}

}  // namespace dfi::eval
