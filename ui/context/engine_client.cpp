#include "engine_client.h"

#include <sstream>

#include "context/engine_locator.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/writer.h"

namespace dfi::ui {
namespace {

constexpr protocol::RequestId kRequestId = 1;
constexpr int kCancelledExitCode = 130;  // dfi::CancelledError::exitCode()

QString describeRuns(const std::vector<protocol::RunSummary>& runs) {
  QStringList lines;
  for (const auto& r : runs)
    lines << QStringLiteral("%1: %2 steps, tau %3 (vLLM %4, SGLang %5)")
                 .arg(QString::fromStdString(r.name))
                 .arg(r.steps)
                 .arg(r.tauReference, 0, 'f', 3)
                 .arg(r.tauVllm, 0, 'f', 3)
                 .arg(r.tauSglang ? QString::number(*r.tauSglang, 'f', 3) : QStringLiteral("n/a"));
  return lines.join('\n');
}

}  // namespace

QString describeEngine(const protocol::Hello& h) {
  return QStringLiteral("dflash-eval %1 (git %2), libtorch %3, CUDA %4")
      .arg(QString::fromStdString(h.engineVersion), QString::fromStdString(h.git), QString::fromStdString(h.torch),
           h.cudaAvailable ? QStringLiteral("available (%1 devices)").arg(h.cudaDevices) : QStringLiteral("not available"));
}

QString protocolMismatch(const protocol::Hello& h) {
  if (h.protocol == protocol::kProtocolVersion) return {};
  return QStringLiteral("the engine (%1) speaks protocol version %2, this GUI version %3: install the same "
                        "version of dflash-eval and dflash-inspector")
      .arg(describeEngine(h))
      .arg(h.protocol)
      .arg(protocol::kProtocolVersion);
}

QString engineProgram(const EngineLaunch& launch, QString* error) {
  if (!launch.commandPrefix.isEmpty() || !needsLocating(launch.enginePath)) return launch.enginePath.trimmed();
  const EngineLocation location = locateEngine();
  if (!location.found()) *error = location.notFoundMessage();
  return location.path;
}

QString cannotStartMessage(const QString& program, const QString& reason) {
  return QStringLiteral("could not start the engine (%1): %2\nChoose the dflash-eval executable in File > Run Evaluation "
                        "> Engine, or set the environment variable DFLASH_EVAL to it.")
      .arg(program, reason);
}

void sendRequest(QProcess& engine, const protocol::Request& request) {
  std::ostringstream line;
  protocol::writeFrame(line, protocol::encodeMessage(request));
  engine.write(line.view().data(), static_cast<qint64>(line.view().size()));
}

EngineClient::EngineClient(QObject* parent) : QObject(parent) {
  connect(&process_, &QProcess::readyReadStandardOutput, this, &EngineClient::readOutput);
  connect(&process_, &QProcess::readyReadStandardError, this, [this] {
    // Keep the end of the engine's log for the error message; forward it to the log dock.
    const QString text = QString::fromUtf8(process_.readAllStandardError());
    stderrTail_ = (stderrTail_ + text).right(4000);
    for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) logger("engine")->info("{}", line.toStdString());
  });
  connect(&process_, &QProcess::finished, this, &EngineClient::processEnded);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) fail(cannotStartMessage(process_.program(), process_.errorString()));
  });
}

EngineClient::~EngineClient() {
  if (process_.state() != QProcess::NotRunning) {
    process_.kill();
    process_.waitForFinished(2000);
  }
  closeSession();
}

bool EngineClient::running() const { return process_.state() != QProcess::NotRunning; }

void EngineClient::start(const EngineLaunch& launch, const protocol::RunOptions& options, const QString& localSession) {
  protocol::RunRequest request{options};
  request.requestId = kRequestId;
  startRequest(launch, request, localSession);
}

void EngineClient::startDiagnosis(const EngineLaunch& launch, const protocol::DiagnoseRequest& request,
                                  const QString& localSession) {
  protocol::DiagnoseRequest numbered = request;
  numbered.requestId = kRequestId;
  startRequest(launch, numbered, localSession);
}

void EngineClient::startRequest(const EngineLaunch& launch, const protocol::Request& request,
                                const QString& localSession) {
  if (running()) return fail(QStringLiteral("a run is already in progress"));
  QString notFound;
  const QString program = engineProgram(launch, &notFound);
  if (program.isEmpty()) return fail(notFound);
  try {
    writer_ = std::make_unique<session::Writer>(
        localSession.toStdString(), session::WriterOptions{.mode = session::OpenMode::Overwrite, .keepIds = true});
  } catch (const Error& e) {
    return fail(QString::fromStdString(e.what()));
  }
  localSession_ = localSession;
  decoder_ = std::make_unique<protocol::FrameDecoder>("engine (" + program.toStdString() + ")");
  runs_.clear();
  hypotheses_.clear();
  runsWithSteps_.clear();
  promptsWithSteps_.clear();
  stderrTail_.clear();
  done_ = false;
  cancelRequested_ = false;
  QStringList command = launch.commandPrefix;
  command << program << QStringLiteral("serve");
  process_.start(command.front(), command.mid(1));
  sendRequest(process_, request);
  emit sessionCreated(localSession);
}

void EngineClient::cancel() {
  if (!running()) return;
  cancelRequested_ = true;
  sendRequest(process_, protocol::CancelRequest{kRequestId});
}

void EngineClient::readOutput() {
  try {
    decoder_->feed(process_.readAllStandardOutput().toStdString());
    while (auto frame = decoder_->next()) handleFrame(*frame);
  } catch (const std::exception& e) {
    // A malformed stream or a record that names an unknown run/step: stop this engine, keep
    // what was written, never let it reach the event loop.
    fail(QStringLiteral("the engine's output could not be read: %1").arg(QString::fromStdString(e.what())));
    done_ = true;
    process_.kill();
  }
}

void EngineClient::handleFrame(const protocol::Frame& frame) {
  if (protocol::isRecordFrame(frame)) return handleRecord(frame);
  handleReply(protocol::decodeReply(frame, "engine"));
}

void EngineClient::handleReply(const protocol::Reply& reply) {
  std::visit(protocol::Overloaded{
                 [this](const protocol::Hello& hello) {
                   if (const QString mismatch = protocolMismatch(hello); !mismatch.isEmpty())
                     throw Error(mismatch.toStdString());  // readOutput stops this engine
                   emit engineReady(describeEngine(hello));
                 },
                 [this](const protocol::Progress& p) {
                   emit progress(p.done, p.total, p.etaSeconds, QString::fromStdString(p.current));
                 },
                 [this](const protocol::Done& done) {
                   done_ = true;
                   closeSession();
                   emit finished(done.request == protocol::RequestKind::Diagnose ? describeDiagnosis()
                                                                                 : describeRuns(done.runs));
                   process_.closeWriteChannel();  // the engine exits at the end of its input
                 },
                 [this](const protocol::ErrorReply& error) {
                   done_ = true;
                   closeSession();
                   // The engine answers a cancel with its CancelledError (exit code 130).
                   if (cancelRequested_ || error.exitCode == kCancelledExitCode) {
                     logger("ui")->info("run cancelled: {}", error.message);
                     emit cancelled(static_cast<int>(promptsWithSteps_.size()));
                   } else {
                     fail(QString::fromStdString(error.message));
                   }
                   process_.closeWriteChannel();
                 }},
             reply);
}

void EngineClient::handleRecord(const protocol::Frame& frame) {
  if (!writer_) return;
  std::visit(protocol::Overloaded{[this](const session::RunRecord& r) {
                                    if (runs_.contains(r.runId))
                                      writer_->finishRun(r.runId, r.finishedAt, r.timingsJson);
                                    else
                                      runs_.insert(writer_->addRun(r));
                                    if (!r.hypothesis.empty()) hypotheses_[r.runId] = r.hypothesis;
                                  },
                                  [this](const session::PromptRecord& r) { writer_->addPrompt(r); },
                                  [this](const session::StepRecord& r) {
                                    writer_->addStep(r);
                                    promptsWithSteps_.insert(r.promptId);
                                    runsWithSteps_.insert(r.runId);
                                  },
                                  [this](const session::TreeRecord& r) { writer_->addTree(r); },
                                  [this](const session::StatisticRecord& r) { writer_->addStatistic(r); },
                                  [this](const session::TensorRecord& r) { writer_->addTensor(r); },
                                  [this](const protocol::TokenStrings& r) { writer_->addTokenStrings(r); }},
             protocol::decodeRecord(frame, "engine"));
}

// A diagnosis's Done carries no tau table (the Diagnosis panel ranks the hypotheses): what was
// recorded, counted from the runs it streamed.
QString EngineClient::describeDiagnosis() const {
  int baselines = 0, hypotheses = 0, measured = 0;
  for (const auto& [run, hypothesis] : hypotheses_) {
    if (hypothesis == "baseline") {
      ++baselines;
      continue;
    }
    ++hypotheses;
    measured += runsWithSteps_.contains(run) ? 1 : 0;
  }
  return QStringLiteral("%1 %2 diagnosed on %3 %4: %5 of %6 hypothesis runs with steps; "
                        "the Diagnosis panel ranks them")
      .arg(baselines)
      .arg(baselines == 1 ? QStringLiteral("drafter") : QStringLiteral("drafters"))
      .arg(promptsWithSteps_.size())
      .arg(promptsWithSteps_.size() == 1 ? QStringLiteral("prompt") : QStringLiteral("prompts"))
      .arg(measured)
      .arg(hypotheses);
}

void EngineClient::processEnded(int exitCode, QProcess::ExitStatus status) {
  closeSession();
  if (done_) return;
  if (cancelRequested_) {  // ended before it could answer the cancel
    done_ = true;
    emit cancelled(static_cast<int>(promptsWithSteps_.size()));
    return;
  }
  const QString how = status == QProcess::CrashExit ? QStringLiteral("crashed")
                                                    : QStringLiteral("exited with code %1").arg(exitCode);
  fail(QStringLiteral("the engine %1 before the run finished; what it recorded is kept in %2\n%3")
           .arg(how, localSession_, stderrTail_.trimmed()));
}

void EngineClient::fail(const QString& message) {
  logger("ui")->error("{}", message.toStdString());
  emit failed(message);
}

void EngineClient::closeSession() {
  if (!writer_) return;
  try {
    writer_->close();
  } catch (const Error& e) {
    logger("ui")->error("closing {}: {}", localSession_.toStdString(), e.what());
  }
  writer_.reset();
}

}  // namespace dfi::ui
