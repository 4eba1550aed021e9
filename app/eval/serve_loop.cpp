#include "serve_loop.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "dfi/base/error.h"
#include "dfi/protocol/frame.h"

namespace dfi::eval {
namespace {

constexpr const char* kStream = "serve stdin";

}  // namespace

protocol::RequestId requestIdOf(const ServeJob& job) {
  return std::visit([](const auto& r) { return r.requestId; }, job);
}

int ServeLoop::serve(std::istream& in, std::ostream& out) {
  FrameStream stream(out);
  out_ = &stream;
  out_->write(protocol::encodeMessage(backend_.hello()));
  std::thread worker([this] { work(); });
  protocol::FrameReader reader(in, kStream);
  while (true) {
    std::optional<protocol::Frame> frame;
    try {
      frame = reader.next();
    } catch (const std::exception& e) {  // a line that is not a frame: not even its id can be read
      sendError(protocol::kNoRequest, e);
      continue;
    }
    if (!frame) break;  // end of input: finish what is queued, then exit
    if (!dispatch(*frame)) break;
  }
  {
    std::lock_guard lock(jobsMutex_);
    inputEnded_ = true;
  }
  jobsChanged_.notify_one();
  worker.join();
  out_->flush();
  out_ = nullptr;
  return 0;
}

// A dfi::Error with its message and exit code; anything else (CUDA out of memory, a libtorch
// error) as an engine failure.
void ServeLoop::sendError(protocol::RequestId requestId, const std::exception& e) {
  protocol::ErrorReply reply{.requestId = requestId};
  if (const auto* error = dynamic_cast<const Error*>(&e)) {
    reply.message = error->what();
    reply.exitCode = error->exitCode();
  } else {
    reply.message = std::string("engine failure: ") + e.what();
    reply.exitCode = 70;
  }
  out_->write(protocol::encodeMessage(reply));
}

// Decodes one request and queues, cancels or stops; false on "shutdown". Runs on the reading
// thread, so nothing may escape it: a request that does not decode is answered here.
bool ServeLoop::dispatch(const protocol::Frame& frame) {
  protocol::Request request;
  try {
    request = protocol::decodeRequest(frame, kStream);
  } catch (const std::exception& e) {
    sendError(protocol::requestIdOf(frame), e);
    return true;
  }
  return std::visit(protocol::Overloaded{[this](protocol::CancelRequest& r) {
                                           cancel(r.requestId);
                                           return true;
                                         },
                                         [this](protocol::ShutdownRequest&) {
                                           shutdown();
                                           return false;
                                         },
                                         [this](auto& job) {  // run, inspect, diagnose
                                           enqueue(std::move(job));
                                           return true;
                                         }},
                    request);
}

// Requests run one at a time, in arrival order, on the worker thread, so the loop keeps reading
// (an inspect queued behind a run, a cancel for either).
void ServeLoop::enqueue(ServeJob job) {
  {
    std::lock_guard lock(jobsMutex_);
    pending_.push_back(std::move(job));
  }
  jobsChanged_.notify_one();
}

// The active request stops at its next check and answers for itself; a queued one is answered
// here, so it is answered exactly once; an unknown id (already answered, or never sent) is not.
void ServeLoop::cancel(protocol::RequestId requestId) {
  std::lock_guard lock(jobsMutex_);
  if (active_ && requestId == activeRequest_) active_->cancel();
  const auto queued = std::ranges::find(pending_, requestId, &requestIdOf);
  if (queued != pending_.end()) {
    pending_.erase(queued);
    sendError(requestId, CancelledError("request " + std::to_string(requestId) + " cancelled before it started"));
  }
}

void ServeLoop::shutdown() {
  {
    std::lock_guard lock(jobsMutex_);
    stopping_ = true;
    if (active_) active_->cancel();
  }
  jobsChanged_.notify_one();
}

void ServeLoop::work() {
  while (true) {
    std::optional<ServeJob> next;
    std::shared_ptr<CancellationToken> token;
    {
      std::unique_lock lock(jobsMutex_);
      jobsChanged_.wait(lock, [this] { return stopping_ || inputEnded_ || !pending_.empty(); });
      if (stopping_) {  // every request still queued is answered: none is dropped unanswered
        for (const ServeJob& job : pending_)
          sendError(requestIdOf(job), CancelledError("request " + std::to_string(requestIdOf(job)) +
                                                     " not started: the server was shut down"));
        pending_.clear();
        return;
      }
      if (pending_.empty()) return;
      next = std::move(pending_.front());
      pending_.pop_front();
      activeRequest_ = requestIdOf(*next);
      token = active_ = std::make_shared<CancellationToken>();
    }
    try {
      backend_.execute(*next, *out_, *token);
    } catch (const std::exception& e) {  // ends this request, not the server
      sendError(requestIdOf(*next), e);
    }
    std::lock_guard lock(jobsMutex_);
    active_.reset();
    activeRequest_ = protocol::kNoRequest;
  }
}

}  // namespace dfi::eval
