#pragma once
// Ctrl-C (SIGINT) during an evaluation or a diagnosis asks it to stop at its next check (after
// the prompt in progress), so what it recorded stays a whole session. For the life of the
// guard; one command at a time holds one.

#include "dfi/base/cancellation.h"

namespace dfi::eval {

class CancelOnInterrupt {
 public:
  explicit CancelOnInterrupt(CancellationToken& token);
  ~CancelOnInterrupt();  // Ctrl-C ends the process again
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;
};

}  // namespace dfi::eval
