#pragma once
// `serve`'s request loop without the engine: it reads requests from one stream, queues them,
// runs them one at a time on a worker thread through a ServeBackend, cancels the queued or
// active one, and answers every request exactly once (its backend's "done", or an "error").
// It links no libtorch, so a scripted backend drives the same threads, queue and writer as
// dflash-eval's engine does, under ThreadSanitizer too (preset tsan, tests/eval/test_serve_loop.cpp).
//
// Two threads, one writer: the reading thread decodes, queues and cancels; the worker runs. Both
// answer through one FrameStream, whole frames under its lock.

#include <condition_variable>
#include <deque>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <variant>

#include "dfi/base/cancellation.h"
#include "dfi/protocol/messages.h"
#include "frame_stream.h"

namespace dfi::eval {

// The requests that queue and run; cancel and shutdown act at once on the reading thread.
using ServeJob = std::variant<protocol::RunRequest, protocol::InspectRequest, protocol::DiagnoseRequest>;

protocol::RequestId requestIdOf(const ServeJob& job);

// What runs a request: the engine (cmd_serve.cpp), or a scripted one in tests.
class ServeBackend {
 public:
  virtual ~ServeBackend() = default;
  // The first frame of the stream: the engine's versions and devices.
  virtual protocol::Hello hello() = 0;
  // Runs one request on the worker thread, writing its frames and, last, its "done" to `out`.
  // It throws to end the request with an error: a dfi::Error with its message and exit code
  // (dfi::CancelledError once `cancel` is set), anything else as an engine failure.
  virtual void execute(const ServeJob& job, FrameStream& out, const CancellationToken& cancel) = 0;
};

class ServeLoop {
 public:
  explicit ServeLoop(ServeBackend& backend) : backend_(backend) {}
  ServeLoop(const ServeLoop&) = delete;
  ServeLoop& operator=(const ServeLoop&) = delete;

  // Serves until "shutdown" (the active request cancelled, every queued one answered) or the
  // end of `in` (the queue finished first). Returns the process exit code.
  int serve(std::istream& in, std::ostream& out);

 private:
  bool dispatch(const protocol::Frame& frame);
  void enqueue(ServeJob job);
  void cancel(protocol::RequestId requestId);
  void shutdown();
  void work();
  void sendError(protocol::RequestId requestId, const std::exception& e);

  ServeBackend& backend_;
  FrameStream* out_ = nullptr;  // the one writer of the output, for the life of serve()
  std::mutex jobsMutex_;        // guards everything below
  std::condition_variable jobsChanged_;
  std::deque<ServeJob> pending_;
  protocol::RequestId activeRequest_ = protocol::kNoRequest;
  std::shared_ptr<CancellationToken> active_;  // the active request's, shared with the worker
  bool stopping_ = false;    // "shutdown": cancel and exit
  bool inputEnded_ = false;  // end of input: exit once the queue is empty
};

}  // namespace dfi::eval
