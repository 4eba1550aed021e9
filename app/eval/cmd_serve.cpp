// dflash-eval serve: the engine as a child process of the GUI (locally or through ssh),
// speaking the protocol over stdin/stdout. Requests (one JSON object per line):
//   {"type":"run", "request_id":1, "target":..., "drafters":[...], "prompts":..., ...,
//    "session":"/path/on/engine/side.dfi" (optional)}
//   {"type":"inspect", "request_id":2, "target":..., "drafter":..., "ids":[...], "anchor":12, ...}
//     (inspect_request.h): one block re-drafted with every probe on
//   {"type":"cancel", "request_id":1}
//   {"type":"shutdown"}   (cancels the active request; at the end of input the queue is
//                          finished first)
// Replies: "hello" first, then per run the records (record_codec.h), "progress" frames,
// and "done" (with the tau summary) or "error" (message and exit code); per inspect the block's
// step, tensor and statistic records, then "done". A failing request never ends the server.
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

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "dfi/base/version.h"
#include "dfi/engine/evaluation.h"
#include "dfi/engine/inspect.h"
#include "dfi/engine/model_registry.h"
#include "dfi/engine/runtime.h"
#include "dfi/protocol/frame.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/writer.h"
#include "inspect_request.h"
#include "run_options.h"
#include "streaming_sink.h"

namespace dfi::eval {
namespace {

using nlohmann::json;

class Server {
 public:
  int serve(std::istream& in, std::ostream& out) {
    out_ = &out;
    const auto rt = engine::runtimeInfo();
    send({{"type", "hello"}, {"protocol", 1}, {"engine_version", version()}, {"git", gitHash()},
          {"torch", rt.torchVersion}, {"cuda_compiled", rt.cudaCompiled},
          {"cuda_available", rt.cudaAvailable}, {"cuda_devices", rt.cudaDeviceCount}});
    std::thread worker([this] { work(); });
    protocol::FrameReader reader(in, "serve stdin");
    while (true) {
      std::optional<protocol::Frame> frame;
      try {
        frame = reader.next();
      } catch (const Error& e) {
        send({{"type", "error"}, {"message", e.what()}, {"exit_code", e.exitCode()}});
        continue;
      }
      if (!frame) break;  // end of input: finish what is queued, then exit
      const std::string type = frame->header.value("type", "");
      if (type == "shutdown") {  // stop now: cancel the active request, drop the queue
        std::lock_guard lock(jobsMutex_);
        stopping_ = true;
        if (active_) active_->cancel();
        break;
      }
      if (type == "run") enqueue(frame->header, &Server::runOne);
      else if (type == "inspect") enqueue(frame->header, &Server::inspectOne);
      else if (type == "cancel") cancel(frame->header.value("request_id", -1));
      else
        send({{"type", "error"}, {"request_id", frame->header.value("request_id", std::int64_t{-1})},
              {"message", "unknown request type '" + type + "'"}, {"exit_code", 2}});
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
  void send(const json& header) {
    std::lock_guard lock(outMutex_);
    protocol::writeFrame(*out_, {header, ""});
  }

  using Job = void (Server::*)(const json&, std::int64_t);
  struct Pending {
    json request;
    std::int64_t requestId;
    Job job;
  };

  // Requests run one at a time, in arrival order, on the worker thread, so the server keeps
  // reading (an inspect queued behind a run, a cancel for either).
  void enqueue(const json& request, Job job) {
    {
      std::lock_guard lock(jobsMutex_);
      pending_.push_back({request, request.value("request_id", std::int64_t{0}), job});
    }
    jobsChanged_.notify_one();
  }

  void cancel(std::int64_t requestId) {
    std::lock_guard lock(jobsMutex_);
    if (active_ && requestId == activeRequest_) active_->cancel();
    const auto queued = std::ranges::find(pending_, requestId, &Pending::requestId);
    if (queued != pending_.end()) {
      pending_.erase(queued);
      const CancelledError cancelled("request " + std::to_string(requestId) + " cancelled before it started");
      send({{"type", "error"}, {"request_id", requestId}, {"message", cancelled.what()},
            {"exit_code", cancelled.exitCode()}});
    }
  }

  void work() {
    while (true) {
      Pending next;
      {
        std::unique_lock lock(jobsMutex_);
        jobsChanged_.wait(lock, [this] { return stopping_ || inputEnded_ || !pending_.empty(); });
        if (stopping_ || pending_.empty()) return;
        next = std::move(pending_.front());
        pending_.pop_front();
        activeRequest_ = next.requestId;
        active_ = std::make_shared<engine::CancellationToken>();
      }
      guarded(next.requestId, [&] { (this->*next.job)(next.request, next.requestId); });
      std::lock_guard lock(jobsMutex_);
      active_.reset();
    }
  }

  template <typename F>
  void guarded(std::int64_t requestId, F&& body) {
    try {
      body();
    } catch (const Error& e) {
      send({{"type", "error"}, {"request_id", requestId}, {"message", e.what()}, {"exit_code", e.exitCode()}});
    } catch (const std::exception& e) {
      // An engine failure (CUDA out of memory, a libtorch error) ends this request, not the server.
      send({{"type", "error"}, {"request_id", requestId}, {"message", std::string("engine failure: ") + e.what()},
            {"exit_code", 70}});
    }
  }

  void inspectOne(const json& request, std::int64_t requestId) {
    const engine::InspectResult result = engine::inspectBlock(models_, inspectRequestFromJson(request));
    std::lock_guard lock(outMutex_);
    protocol::writeFrame(*out_, protocol::encodeRecord(result.step));
    for (const auto& tensor : result.tensors) protocol::writeFrame(*out_, protocol::encodeRecord(tensor));
    for (const auto& statistic : result.statistics) protocol::writeFrame(*out_, protocol::encodeRecord(statistic));
    protocol::writeFrame(*out_, {{{"type", "done"}, {"request_id", requestId}, {"request", "inspect"},
                                  {"tensors", result.tensors.size()}, {"statistics", result.statistics.size()}},
                                 ""});
  }

  void runOne(const json& request, std::int64_t requestId) {
    const engine::EvaluationSettings settings = runOptionsFromJson(request).toSettings();
    std::optional<session::Writer> writer;
    if (request.contains("session") && request["session"].is_string())
      writer.emplace(request["session"].get<std::string>(), session::WriterOptions{.mode = session::OpenMode::Overwrite});
    StreamingSink sink(*out_, outMutex_, writer ? &*writer : nullptr);
    auto progress = [&](const engine::EvaluationProgress& p) {
      send({{"type", "progress"}, {"request_id", requestId}, {"done", p.done}, {"total", p.total},
            {"elapsed_s", p.elapsedSeconds}, {"eta_s", p.etaSeconds}, {"current", p.current}});
    };
    std::shared_ptr<engine::CancellationToken> token;
    {
      std::lock_guard lock(jobsMutex_);
      token = active_;
    }
    const auto runs = engine::runEvaluation(settings, sink, progress, *token, &models_);
    if (writer) writer->close();
    json summary = json::array();
    for (const auto& r : runs)
      summary.push_back({{"run_id", r.runId}, {"name", r.name}, {"steps", r.steps},
                         {"tau_reference", r.tauReference}, {"tau_vllm", r.tauVllm},
                         {"tau_sglang", r.tauSglang ? json(*r.tauSglang) : json(nullptr)}});
    send({{"type", "done"}, {"request_id", requestId}, {"runs", summary}});
  }

  std::ostream* out_ = nullptr;
  std::mutex outMutex_;
  std::mutex jobsMutex_;  // guards the queue, the active request and its token
  std::condition_variable jobsChanged_;
  std::deque<Pending> pending_;
  std::int64_t activeRequest_ = -1;
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
    Server server;
    return server.serve(std::cin, std::cout);
  });
}

}  // namespace dfi::eval
