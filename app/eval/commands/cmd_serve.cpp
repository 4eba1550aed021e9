// dflash-eval serve: the engine as a child process of the GUI (locally or through ssh),
// speaking the protocol over stdin/stdout. The messages are the types of
// dfi/protocol/messages.h (their keys in message_fields.h); this file is their dispatch:
//   run      (protocol::RunRequest: `run`'s options, and an optional engine-side session file)
//   inspect  (protocol::InspectRequest: the engine's inspect settings): one block re-drafted with every probe on
//   diagnose (protocol::DiagnoseRequest: `diagnose`'s options): its runs stream as a run's do
//   cancel   the queued or active request of that id
//   shutdown cancels the active request and drops the queue; at the end of input the queue
//            is finished first
// Replies: "hello" first, then per run the records (record_codec.h), "progress", and "done"
// (with the tau summary) or "error" (message and exit code); per inspect the block's step,
// tensor and statistic records, then "done" with their counts. A request that does not decode
// (invalid JSON, an unknown type, a missing or mistyped field) is answered with an "error"
// naming the field, under its request id when that can be read, else -1; a request whose
// settings do not validate (settings::validate, as the command line's) is answered with an
// "error" naming the option; neither ever ends the server.
// Requests queue and run one at a time; models stay loaded between requests (ModelRegistry):
// a run or an inspect with the same target, devices and dtype reuses them.

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "dfi/base/version.h"
#include "dfi/engine/diagnosis.h"
#include "dfi/engine/evaluation.h"
#include "dfi/engine/inspect.h"
#include "dfi/engine/model_registry.h"
#include "dfi/engine/runtime.h"
#include "dfi/protocol/frame.h"
#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/writer.h"
#include "dfi/settings/settings.h"
#include "frame_stream.h"
#include "streaming_sink.h"

namespace dfi::eval {
namespace {

constexpr const char* kStream = "serve stdin";

class Server {
 public:
  int serve(std::istream& in, std::ostream& out) {
    FrameStream stream(out);
    out_ = &stream;
    const auto rt = engine::runtimeInfo();
    send(protocol::Hello{.engineVersion = version(), .git = gitHash(),
                         .torch = rt.torchVersion, .cudaCompiled = rt.cudaCompiled,
                         .cudaAvailable = rt.cudaAvailable, .cudaDevices = rt.cudaDeviceCount});
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
    return 0;
  }

 private:
  void send(const protocol::Reply& reply) {
    out_->write(protocol::encodeMessage(reply));
  }

  // A dfi::Error with its message and exit code; anything else (CUDA out of memory, a libtorch
  // error) as an engine failure.
  void sendError(protocol::RequestId requestId, const std::exception& e) {
    if (const auto* error = dynamic_cast<const Error*>(&e))
      send(protocol::ErrorReply{.requestId = requestId, .message = error->what(), .exitCode = error->exitCode()});
    else
      send(protocol::ErrorReply{
          .requestId = requestId, .message = std::string("engine failure: ") + e.what(), .exitCode = 70});
  }

  // Decodes one request and queues, cancels or stops; false on "shutdown". Runs on the reading
  // thread, so nothing may escape it: a request that does not decode is answered here.
  bool dispatch(const protocol::Frame& frame) {
    protocol::Request request;
    try {
      request = protocol::decodeRequest(frame, kStream);
    } catch (const std::exception& e) {
      sendError(protocol::requestIdOf(frame), e);
      return true;
    }
    return std::visit(
        protocol::Overloaded{[this](protocol::RunRequest& r) { return enqueue(std::move(r)); },
                             [this](protocol::InspectRequest& r) { return enqueue(std::move(r)); },
                             [this](protocol::DiagnoseRequest& r) { return enqueue(std::move(r)); },
                             [this](const protocol::CancelRequest& r) {
                               cancel(r.requestId);
                               return true;
                             },
                             [this](const protocol::ShutdownRequest&) {
                               std::lock_guard lock(jobsMutex_);
                               stopping_ = true;
                               if (active_) active_->cancel();
                               return false;
                             }},
        request);
  }

  using Job = std::variant<protocol::RunRequest, protocol::InspectRequest, protocol::DiagnoseRequest>;
  static protocol::RequestId idOf(const Job& job) {
    return std::visit([](const auto& r) { return r.requestId; }, job);
  }

  // Requests run one at a time, in arrival order, on the worker thread, so the server keeps
  // reading (an inspect queued behind a run, a cancel for either).
  bool enqueue(Job job) {
    {
      std::lock_guard lock(jobsMutex_);
      pending_.push_back(std::move(job));
    }
    jobsChanged_.notify_one();
    return true;
  }

  void cancel(protocol::RequestId requestId) {
    std::lock_guard lock(jobsMutex_);
    if (active_ && requestId == activeRequest_) active_->cancel();
    const auto queued = std::ranges::find(pending_, requestId, &Server::idOf);
    if (queued != pending_.end()) {
      pending_.erase(queued);
      sendError(requestId, CancelledError("request " + std::to_string(requestId) + " cancelled before it started"));
    }
  }

  void work() {
    while (true) {
      std::optional<Job> next;
      {
        std::unique_lock lock(jobsMutex_);
        jobsChanged_.wait(lock, [this] { return stopping_ || inputEnded_ || !pending_.empty(); });
        if (stopping_) {  // every request still queued is answered: none is dropped unanswered
          for (const Job& job : pending_)
            sendError(idOf(job), CancelledError("request " + std::to_string(idOf(job)) +
                                                " not started: the server was shut down"));
          pending_.clear();
          return;
        }
        if (pending_.empty()) return;
        next = std::move(pending_.front());
        pending_.pop_front();
        activeRequest_ = idOf(*next);
        active_ = std::make_shared<engine::CancellationToken>();
      }
      try {
        std::visit(protocol::Overloaded{[this](const protocol::RunRequest& r) { runOne(r); },
                                        [this](const protocol::InspectRequest& r) { inspectOne(r); },
                                        [this](const protocol::DiagnoseRequest& r) { diagnoseOne(r); }},
                   *next);
      } catch (const std::exception& e) {  // ends this request, not the server
        sendError(idOf(*next), e);
      }
      std::lock_guard lock(jobsMutex_);
      active_.reset();
    }
  }

  void inspectOne(const protocol::InspectRequest& request) {
    settings::validate(request);
    const engine::InspectResult result = engine::inspectBlock(models_, request);
    std::vector<protocol::Frame> frames{protocol::encodeRecord(result.step)};
    for (const auto& tensor : result.tensors) frames.push_back(protocol::encodeRecord(tensor));
    for (const auto& statistic : result.statistics) frames.push_back(protocol::encodeRecord(statistic));
    frames.push_back(protocol::encodeMessage(protocol::Done{
        .requestId = request.requestId,
        .request = protocol::RequestKind::Inspect,
        .tensors = static_cast<std::int64_t>(result.tensors.size()),
        .statistics = static_cast<std::int64_t>(result.statistics.size())}));
    out_->write(frames);
  }

  // The request's progress, as Progress messages.
  auto progressOf(protocol::RequestId requestId) {
    return [this, requestId](const engine::EvaluationProgress& p) {
      send(protocol::Progress{.requestId = requestId, .done = p.done, .total = p.total,
                              .elapsedSeconds = p.elapsedSeconds, .etaSeconds = p.etaSeconds, .current = p.current});
    };
  }

  std::shared_ptr<engine::CancellationToken> activeToken() {
    std::lock_guard lock(jobsMutex_);
    return active_;
  }

  void runOne(const protocol::RunRequest& request) {
    const engine::EvaluationSettings& settings = request;
    settings::validate(settings);
    std::optional<session::Writer> writer;
    if (request.session)
      writer.emplace(*request.session, session::WriterOptions{.mode = session::OpenMode::Overwrite});
    StreamingSink sink(*out_, writer ? &*writer : nullptr);
    const auto runs = engine::runEvaluation(settings, sink, progressOf(request.requestId), *activeToken(), &models_);
    if (writer) writer->close();
    const auto summary = engine::summaryRuns(settings, runs);
    send(protocol::Done{.requestId = request.requestId,
                        .runs = analysis::summarizeRuns(summary),
                        .comparisons = analysis::pairedComparisons(summary)});
  }

  // The diagnosis's runs stream as a run's records; the GUI reads the diagnosis back from them.
  void diagnoseOne(const protocol::DiagnoseRequest& request) {
    const engine::DiagnosisSettings& settings = request;  // the evaluation's seed seeds the tap noise
    settings::validate(settings);
    std::optional<session::Writer> writer;
    if (request.session)
      writer.emplace(*request.session, session::WriterOptions{.mode = session::OpenMode::Overwrite});
    StreamingSink sink(*out_, writer ? &*writer : nullptr);
    engine::runDiagnosis(settings, sink, progressOf(request.requestId), *activeToken(), &models_);
    if (writer) writer->close();
    send(protocol::Done{.requestId = request.requestId, .request = protocol::RequestKind::Diagnose});
  }

  FrameStream* out_ = nullptr;  // the one writer of the output, for the life of serve()
  std::mutex jobsMutex_;  // guards the queue, the active request and its token
  std::condition_variable jobsChanged_;
  std::deque<Job> pending_;
  protocol::RequestId activeRequest_ = protocol::kNoRequest;
  std::shared_ptr<engine::CancellationToken> active_;
  bool stopping_ = false;    // "shutdown": cancel and exit
  bool inputEnded_ = false;  // end of input: exit once the queue is empty
  engine::ModelRegistry models_;  // used by the worker only
};

}  // namespace

void registerServeCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("serve", "Serve the GUI over stdin/stdout (JSON lines + binary frames)");
  setAction(*sub, [] {
    std::ios::sync_with_stdio(false);
    // std::cin is tied to std::cout: every read on the request thread would flush std::cout
    // while the worker writes a frame, tearing or repeating it. Only FrameStream touches it.
    std::cin.tie(nullptr);
    Server server;
    return server.serve(std::cin, std::cout);
  });
}

}  // namespace dfi::eval
