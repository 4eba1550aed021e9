// dflash-eval serve: the engine as a child process of the GUI (locally or through ssh),
// speaking the protocol over stdin/stdout. Requests (one JSON object per line):
//   {"type":"run", "request_id":1, "target":..., "drafters":[...], "prompts":..., ...,
//    "session":"/path/on/engine/side.dfi" (optional)}
//   {"type":"cancel", "request_id":1}
//   {"type":"shutdown"}   (or end of input)
// Replies: "hello" first, then per run the records (record_codec.h), "progress" frames,
// and "done" (with the tau summary) or "error" (message and exit code). A failing run never
// ends the server; the model stays in this process, one run at a time.

#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "dfi/base/version.h"
#include "dfi/engine/evaluation.h"
#include "dfi/engine/runtime.h"
#include "dfi/protocol/frame.h"
#include "dfi/session/writer.h"
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
    protocol::FrameReader reader(in, "serve stdin");
    while (true) {
      std::optional<protocol::Frame> frame;
      try {
        frame = reader.next();
      } catch (const Error& e) {
        send({{"type", "error"}, {"message", e.what()}, {"exit_code", e.exitCode()}});
        continue;
      }
      if (!frame) break;
      const std::string type = frame->header.value("type", "");
      if (type == "shutdown") break;
      if (type == "run") startRun(frame->header);
      else if (type == "cancel") cancelRun(frame->header.value("request_id", -1));
      else send({{"type", "error"}, {"message", "unknown request type '" + type + "'"}, {"exit_code", 2}});
    }
    if (worker_.joinable()) {
      if (cancel_) cancel_->cancel();
      worker_.join();
    }
    return 0;
  }

 private:
  void send(const json& header) {
    std::lock_guard lock(outMutex_);
    protocol::writeFrame(*out_, {header, ""});
  }

  void cancelRun(std::int64_t requestId) {
    if (cancel_ && requestId == activeRequest_) cancel_->cancel();
  }

  void startRun(const json& request) {
    const std::int64_t requestId = request.value("request_id", 0);
    if (busy_) {
      send({{"type", "error"}, {"request_id", requestId}, {"message", "a run is already in progress"}, {"exit_code", 2}});
      return;
    }
    if (worker_.joinable()) worker_.join();
    busy_ = true;
    activeRequest_ = requestId;
    cancel_ = std::make_unique<engine::CancellationToken>();
    worker_ = std::thread([this, request, requestId] {
      runOne(request, requestId);
      busy_ = false;
    });
  }

  void runOne(const json& request, std::int64_t requestId) {
    try {
      const engine::EvaluationSettings settings = runOptionsFromJson(request).toSettings();
      std::optional<session::Writer> writer;
      if (request.contains("session") && request["session"].is_string())
        writer.emplace(request["session"].get<std::string>(), session::WriterOptions{.mode = session::OpenMode::Overwrite});
      StreamingSink sink(*out_, outMutex_, writer ? &*writer : nullptr);
      auto progress = [&](const engine::EvaluationProgress& p) {
        send({{"type", "progress"}, {"request_id", requestId}, {"done", p.done}, {"total", p.total},
              {"elapsed_s", p.elapsedSeconds}, {"eta_s", p.etaSeconds}, {"current", p.current}});
      };
      const auto runs = engine::runEvaluation(settings, sink, progress, *cancel_);
      if (writer) writer->close();
      json summary = json::array();
      for (const auto& r : runs)
        summary.push_back({{"run_id", r.runId}, {"name", r.name}, {"steps", r.steps},
                           {"tau_reference", r.tauReference}, {"tau_vllm", r.tauVllm},
                           {"tau_sglang", r.tauSglang ? json(*r.tauSglang) : json(nullptr)}});
      send({{"type", "done"}, {"request_id", requestId}, {"runs", summary}});
    } catch (const Error& e) {
      send({{"type", "error"}, {"request_id", requestId}, {"message", e.what()}, {"exit_code", e.exitCode()}});
    } catch (const std::exception& e) {
      // An engine failure (CUDA out of memory, a libtorch error) ends this run, not the server.
      send({{"type", "error"}, {"request_id", requestId}, {"message", std::string("engine failure: ") + e.what()},
            {"exit_code", 70}});
    }
  }

  std::ostream* out_ = nullptr;
  std::mutex outMutex_;
  std::thread worker_;
  std::atomic<bool> busy_{false};
  std::atomic<std::int64_t> activeRequest_{-1};
  std::unique_ptr<engine::CancellationToken> cancel_;
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
