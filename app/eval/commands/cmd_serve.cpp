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
// The queue, cancels, shutdown and the one writer are ServeLoop's (serve_loop.h, torch-free, so
// tests drive it with a scripted backend under ThreadSanitizer); this file is the backend that
// runs a request on the engine. Models stay loaded between requests (ModelRegistry): a run or an
// inspect with the same target, devices and dtype reuses them.

#include <iostream>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/version.h"
#include "dfi/engine/diagnosis.h"
#include "dfi/engine/evaluation.h"
#include "dfi/engine/inspect.h"
#include "dfi/engine/model_registry.h"
#include "dfi/engine/runtime.h"
#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/writer.h"
#include "dfi/settings/settings.h"
#include "serve_loop.h"
#include "streaming_sink.h"

namespace dfi::eval {
namespace {

class EngineBackend : public ServeBackend {
 public:
  protocol::Hello hello() override {
    const auto rt = engine::runtimeInfo();
    return {.engineVersion = version(), .git = gitHash(), .torch = rt.torchVersion,
            .cudaCompiled = rt.cudaCompiled, .cudaAvailable = rt.cudaAvailable, .cudaDevices = rt.cudaDeviceCount};
  }

  void execute(const ServeJob& job, FrameStream& out, const CancellationToken& cancel) override {
    std::visit(protocol::Overloaded{[&](const protocol::RunRequest& r) { runOne(r, out, cancel); },
                                    [&](const protocol::InspectRequest& r) { inspectOne(r, out); },
                                    [&](const protocol::DiagnoseRequest& r) { diagnoseOne(r, out, cancel); }},
               job);
  }

 private:
  void inspectOne(const protocol::InspectRequest& request, FrameStream& out) {
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
    out.write(frames);
  }

  // The request's progress, as Progress messages.
  static auto progressOf(protocol::RequestId requestId, FrameStream& out) {
    return [requestId, &out](const engine::EvaluationProgress& p) {
      out.write(protocol::encodeMessage(protocol::Progress{.requestId = requestId, .done = p.done, .total = p.total,
                                                           .elapsedSeconds = p.elapsedSeconds,
                                                           .etaSeconds = p.etaSeconds, .current = p.current}));
    };
  }

  // The engine-side session a request asks for (its records are written there first).
  static void openSession(std::optional<session::Writer>& writer, const std::optional<std::string>& path) {
    if (path) writer.emplace(*path, session::WriterOptions{.mode = session::OpenMode::Overwrite});
  }

  void runOne(const protocol::RunRequest& request, FrameStream& out, const CancellationToken& cancel) {
    const engine::EvaluationSettings& settings = request;
    settings::validate(settings);
    std::optional<session::Writer> writer;
    openSession(writer, request.session);
    StreamingSink sink(out, writer ? &*writer : nullptr);
    const auto runs = engine::runEvaluation(settings, sink, progressOf(request.requestId, out), cancel, &models_);
    if (writer) writer->close();
    const auto summary = engine::summaryRuns(settings, runs);
    out.write(protocol::encodeMessage(protocol::Done{.requestId = request.requestId,
                                                     .runs = analysis::summarizeRuns(summary),
                                                     .comparisons = analysis::pairedComparisons(summary)}));
  }

  // The diagnosis's runs stream as a run's records; the GUI reads the diagnosis back from them.
  void diagnoseOne(const protocol::DiagnoseRequest& request, FrameStream& out, const CancellationToken& cancel) {
    const engine::DiagnosisSettings& settings = request;  // the evaluation's seed seeds the tap noise
    settings::validate(settings);
    std::optional<session::Writer> writer;
    openSession(writer, request.session);
    StreamingSink sink(out, writer ? &*writer : nullptr);
    engine::runDiagnosis(settings, sink, progressOf(request.requestId, out), cancel, &models_);
    if (writer) writer->close();
    out.write(protocol::encodeMessage(protocol::Done{.requestId = request.requestId,
                                                     .request = protocol::RequestKind::Diagnose}));
  }

  engine::ModelRegistry models_;  // used by the worker thread only
};

}  // namespace

void registerServeCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("serve", "Serve the GUI over stdin/stdout (JSON lines + binary frames)");
  setAction(*sub, [] {
    std::ios::sync_with_stdio(false);
    // std::cin is tied to std::cout: every read on the request thread would flush std::cout
    // while the worker writes a frame, tearing or repeating it. Only FrameStream touches it.
    std::cin.tie(nullptr);
    EngineBackend engine;
    ServeLoop loop(engine);
    return loop.serve(std::cin, std::cout);
  });
}

}  // namespace dfi::eval
