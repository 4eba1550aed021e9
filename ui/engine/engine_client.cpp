#include "engine/engine_client.h"

#include "dfi/base/error.h"
#include "dfi/base/log.h"
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

EngineClient::EngineClient(QObject* parent)
    : QObject(parent),
      engine_({.record = [this](const protocol::Record& record) { handleRecord(record); },
               .reply = [this](const protocol::Reply& reply) { handleReply(reply); }}) {
  connect(&engine_, &EngineProcess::failed, this, [this](const QString& message) {
    done_ = true;  // how the engine ends after this is no news
    fail(message);
  });
  connect(&engine_, &EngineProcess::exited, this, &EngineClient::processEnded);
}

// A running engine is killed by engine_'s destructor, with no signal.
EngineClient::~EngineClient() { closeSession(); }

bool EngineClient::running() const { return engine_.running(); }

void EngineClient::start(const EngineLaunch& launch, const settings::RunSettings& settings,
                         const QString& localSession) {
  protocol::RunRequest request{settings};
  request.requestId = kRequestId;
  startRequest(launch, request, localSession);
}

void EngineClient::startDiagnosis(const EngineLaunch& launch, const settings::DiagnoseSettings& settings,
                                  const QString& localSession) {
  protocol::DiagnoseRequest request{settings};
  request.requestId = kRequestId;
  startRequest(launch, request, localSession);
}

void EngineClient::startRequest(const EngineLaunch& launch, const protocol::Request& request,
                                const QString& localSession) {
  if (running()) return fail(QStringLiteral("a run is already in progress"));
  QString notFound;
  if (!engine_.locate(launch, &notFound)) return fail(notFound);
  try {
    writer_ = std::make_unique<session::Writer>(
        localSession.toStdString(), session::WriterOptions{.mode = session::OpenMode::Overwrite, .keepIds = true});
  } catch (const Error& e) {
    return fail(QString::fromStdString(e.what()));
  }
  localSession_ = localSession;
  runs_.clear();
  hypotheses_.clear();
  runsWithSteps_.clear();
  promptsWithSteps_.clear();
  done_ = false;
  cancelRequested_ = false;
  engine_.start();
  engine_.send(request);
  emit sessionCreated(localSession);
}

void EngineClient::cancel() {
  if (!running()) return;
  cancelRequested_ = true;
  engine_.send(protocol::CancelRequest{kRequestId});
}

void EngineClient::handleReply(const protocol::Reply& reply) {
  std::visit(protocol::Overloaded{
                 [this](const protocol::Hello& hello) { emit engineReady(describeEngine(hello)); },
                 [this](const protocol::Progress& p) {
                   emit progress(p.done, p.total, p.etaSeconds, QString::fromStdString(p.current));
                 },
                 [this](const protocol::Done& done) {
                   done_ = true;
                   closeSession();
                   emit finished(done.request == protocol::RequestKind::Diagnose ? describeDiagnosis()
                                                                                 : describeRuns(done.runs));
                   engine_.closeInput();  // the engine exits at the end of its input
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
                   engine_.closeInput();
                 }},
             reply);
}

void EngineClient::handleRecord(const protocol::Record& record) {
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
             record);
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

void EngineClient::processEnded(const QString& how, const QString& logTail) {
  closeSession();
  if (done_) return;
  if (cancelRequested_) {  // ended before it could answer the cancel
    done_ = true;
    emit cancelled(static_cast<int>(promptsWithSteps_.size()));
    return;
  }
  fail(QStringLiteral("the engine %1 before the run finished; what it recorded is kept in %2\n%3")
           .arg(how, localSession_, logTail));
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
