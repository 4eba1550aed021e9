#include "engine/engine_client.h"

#include <QEventLoop>
#include <QFileInfo>
#include <QTimer>

#include "dfi/analysis/summary_table.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"

namespace dfi::ui {
namespace {

constexpr protocol::RequestId kRequestId = 1;
constexpr int kCancelledExitCode = 130;  // dfi::CancelledError::exitCode()

// The table `dflash-eval run` prints at its end, from the same rows and comparisons: tau with
// its 95% interval, the paired differences and their verdicts.
QString describeRuns(const protocol::Done& done) {
  return QString::fromStdString(analysis::formatSummaryTable(done.runs) + analysis::formatComparisons(done.comparisons));
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
                         const QString& localSession, session::OpenMode mode) {
  protocol::RunRequest request{settings};
  request.requestId = kRequestId;
  startRequest(launch, request, localSession, mode);
}

void EngineClient::startDiagnosis(const EngineLaunch& launch, const settings::DiagnoseSettings& settings,
                                  const QString& localSession, session::OpenMode mode) {
  protocol::DiagnoseRequest request{settings};
  request.requestId = kRequestId;
  startRequest(launch, request, localSession, mode);
}

void EngineClient::startRequest(const EngineLaunch& launch, const protocol::Request& request,
                                const QString& localSession, session::OpenMode mode) {
  if (running()) return fail(QStringLiteral("a run is already in progress"));
  const bool exists = QFileInfo::exists(localSession);
  if (mode == session::OpenMode::CreateNew && exists)
    return fail(QStringLiteral("%1 exists: append to it, replace it or choose another name").arg(localSession));
  QString notFound;
  if (!engine_.locate(launch, &notFound)) return fail(notFound);
  localSession_ = localSession;
  // Appending to a file that is not there yet is creating it.
  sessionMode_ = mode == session::OpenMode::Append && !exists ? session::OpenMode::CreateNew : mode;
  shift_ = {};
  recordingFailed_ = false;
  runs_.clear();
  hypotheses_.clear();
  runsWithSteps_.clear();
  promptsWithSteps_.clear();
  done_ = false;
  cancelRequested_ = false;
  engine_.start();
  engine_.send(request);
}

bool EngineClient::openSession() {
  if (writer_) return true;
  if (recordingFailed_) return false;
  try {
    writer_ = std::make_unique<session::Writer>(localSession_.toStdString(),
                                                session::WriterOptions{.mode = sessionMode_, .keepIds = true});
  } catch (const Error& e) {
    recordingFailed_ = true;
    done_ = true;
    cancel();
    fail(QString::fromStdString(e.what()));
    return false;
  }
  shift_ = writer_->pastExistingIds();
  emit sessionCreated(localSession_);
  return true;
}

void EngineClient::cancel() {
  if (!running()) return;
  cancelRequested_ = true;
  engine_.send(protocol::CancelRequest{kRequestId});
}

void EngineClient::stop(int waitMs) {
  if (!running()) return;
  cancel();
  QEventLoop wait;
  QTimer timeout;
  timeout.setSingleShot(true);
  connect(&timeout, &QTimer::timeout, &wait, &QEventLoop::quit);
  connect(&engine_, &EngineProcess::exited, &wait, &QEventLoop::quit);
  timeout.start(waitMs);
  if (running()) wait.exec();
  done_ = true;  // how the engine ends now is no news
  engine_.stop();
  closeSession();
}

void EngineClient::handleReply(const protocol::Reply& reply) {
  std::visit(protocol::Overloaded{
                 [this](const protocol::Hello& hello) { emit engineReady(describeEngine(hello)); },
                 [this](const protocol::Progress& p) {
                   emit progress(p.done, p.total, p.etaSeconds, QString::fromStdString(p.current));
                 },
                 [this](const protocol::Done& done) {
                   if (done_) return engine_.closeInput();  // already ended here (recording failed)
                   done_ = true;
                   closeSession();
                   emit finished(done.request == protocol::RequestKind::Diagnose ? describeDiagnosis()
                                                                                 : describeRuns(done));
                   engine_.closeInput();  // the engine exits at the end of its input
                 },
                 [this](const protocol::ErrorReply& error) {
                   if (done_) return engine_.closeInput();
                   done_ = true;
                   closeSession();
                   // The engine answers a cancel with its CancelledError (exit code 130); any
                   // other error is reported as one, even after a cancel, never hidden by it.
                   if (error.exitCode == kCancelledExitCode) {
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
  if (!openSession()) return;
  try {
    write(record);
  } catch (const Error& e) {  // a full disk, a session of another tokenizer: stop, keep what is in
    recordingFailed_ = true;
    done_ = true;
    closeSession();
    cancel();
    fail(QStringLiteral("recording into %1 stopped: %2; what was recorded before is kept")
             .arg(localSession_, QString::fromStdString(e.what())));
  }
}

// Each record under the engine's ids, moved past the session's own.
void EngineClient::write(const protocol::Record& record) {
  const auto shifted = [this](auto r) {
    shift_.apply(r);
    return r;
  };
  std::visit(protocol::Overloaded{[&](const session::RunRecord& engineRun) {
                                    const session::RunRecord r = shifted(engineRun);
                                    if (runs_.contains(r.runId))
                                      writer_->finishRun(r.runId, r.finishedAt, r.timingsJson);
                                    else
                                      runs_.insert(writer_->addRun(r));
                                    if (!r.hypothesis.empty()) hypotheses_[r.runId] = r.hypothesis;
                                  },
                                  [&](const session::PromptRecord& r) { writer_->addPrompt(shifted(r)); },
                                  [&](const session::StepRecord& engineStep) {
                                    const session::StepRecord r = shifted(engineStep);
                                    writer_->addStep(r);
                                    promptsWithSteps_.insert(r.promptId);
                                    runsWithSteps_.insert(r.runId);
                                  },
                                  [&](const session::TreeRecord& r) { writer_->addTree(shifted(r)); },
                                  [&](const session::StatisticRecord& r) { writer_->addStatistic(shifted(r)); },
                                  [&](const session::TensorRecord& r) { writer_->addTensor(shifted(r)); },
                                  [&](const protocol::TokenStrings& r) { writer_->addTokenStrings(r); }},
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
  if (runs_.empty())
    fail(QStringLiteral("the engine %1 before it recorded anything; %2 was not touched\n%3")
             .arg(how, localSession_, logTail));
  else
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
