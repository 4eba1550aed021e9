#include "context/inspect_client.h"


#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/writer.h"

namespace dfi::ui {

InspectClient::InspectClient(QObject* parent) : QObject(parent) {
  // The engine is located when the first request starts it (engine_locator.h: DFLASH_EVAL,
  // beside the inspector, the build tree, PATH); DFI_ENGINE_PREFIX ("ssh gpu-host") runs it elsewhere.
  launch_.commandPrefix = QProcess::splitCommand(qEnvironmentVariable("DFI_ENGINE_PREFIX"));
  connect(&process_, &QProcess::readyReadStandardOutput, this, &InspectClient::readOutput);
  connect(&process_, &QProcess::readyReadStandardError, this, [this] {
    const QString text = QString::fromUtf8(process_.readAllStandardError());
    stderrTail_ = (stderrTail_ + text).right(4000);
    for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) logger("engine")->info("{}", line.toStdString());
  });
  connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    if (!active_) return;
    fail(QStringLiteral("the engine %1 during the inspect request\n%2")
             .arg(status == QProcess::CrashExit ? QStringLiteral("crashed") : QStringLiteral("exited with code %1").arg(code),
                  stderrTail_.trimmed()));
  });
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart)
      fail(cannotStartMessage(process_.program(), process_.errorString()));
  });
}

InspectClient::~InspectClient() { stop(); }

void InspectClient::setLaunch(const EngineLaunch& launch) {
  const bool changed = launch.commandPrefix != launch_.commandPrefix || launch.enginePath != launch_.enginePath;
  launch_ = launch;
  if (changed) stop();
}

void InspectClient::stop() {
  if (process_.state() == QProcess::NotRunning) return;
  process_.closeWriteChannel();
  if (!process_.waitForFinished(1000)) {
    process_.kill();
    process_.waitForFinished(2000);
  }
}

void InspectClient::inspect(protocol::InspectRequest request, const QString& sessionPath) {
  if (active_) return fail(QStringLiteral("an inspect request is already in progress"));
  if (process_.state() == QProcess::NotRunning) {
    QString notFound;
    const QString program = engineProgram(launch_, &notFound);
    if (program.isEmpty()) return fail(notFound);
    decoder_ = std::make_unique<protocol::FrameDecoder>("engine (" + program.toStdString() + ")");
    stderrTail_.clear();
    QStringList command = launch_.commandPrefix;
    command << program << QStringLiteral("serve");
    process_.start(command.front(), command.mid(1));
  }
  active_ = nextRequest_++;
  sessionPath_ = sessionPath;
  answer_ = {};
  answer_.run = request.runId;
  answer_.step = request.stepId;
  request.requestId = active_;
  sendRequest(process_, request);
  emit requested(answer_.step);
}

void InspectClient::readOutput() {
  try {
    decoder_->feed(process_.readAllStandardOutput().toStdString());
    while (auto frame = decoder_->next()) handleFrame(*frame);
  } catch (const std::exception& e) {
    fail(QStringLiteral("the engine's output could not be read: %1").arg(QString::fromStdString(e.what())));
    process_.kill();
  }
}

void InspectClient::handleFrame(const protocol::Frame& frame) {
  if (protocol::isRecordFrame(frame)) {
    if (!active_) return;
    protocol::Record record = protocol::decodeRecord(frame, "engine");
    // The engine keys the records to the run and step the request named, so they are stored
    // under the ids they carry; the re-drafted step itself is the recorded one again and is not
    // stored a second time.
    if (auto* t = std::get_if<session::TensorRecord>(&record))
      answer_.tensors.push_back(std::move(*t));
    else if (auto* s = std::get_if<session::StatisticRecord>(&record))
      answer_.statistics.push_back(std::move(*s));
    return;
  }
  handleReply(protocol::decodeReply(frame, "engine"));
}

void InspectClient::handleReply(const protocol::Reply& reply) {
  std::visit(protocol::Overloaded{[](const protocol::Hello& hello) {
                                    if (const QString mismatch = protocolMismatch(hello); !mismatch.isEmpty())
                                      throw Error(mismatch.toStdString());  // readOutput stops this engine
                                  },
                                  [](const protocol::Progress&) {},  // runs only
                                  [this](const protocol::Done& done) {
                                    if (done.requestId == active_) finish();
                                  },
                                  [this](const protocol::ErrorReply& error) {
                                    // -1: a request the engine could not read, which can only be ours
                                    if (error.requestId == active_ || error.requestId == protocol::kNoRequest)
                                      fail(QString::fromStdString(error.message));
                                  }},
             reply);
}

void InspectClient::finish() {
  active_ = 0;
  try {
    session::Writer writer(sessionPath_.toStdString(), {.mode = session::OpenMode::Append});
    for (const auto& t : answer_.tensors) writer.addTensor(t);
    for (const auto& s : answer_.statistics) writer.addStatistic(s);
    writer.close();
    answer_.stored = true;
  } catch (const Error& e) {
    answer_.storeError = QString::fromStdString(e.what());
    logger("ui")->warn("inspect answer kept in memory only, {} cannot be written: {}", sessionPath_.toStdString(),
                       e.what());
  }
  emit answered(answer_);
}

void InspectClient::fail(const QString& message) {
  active_ = 0;
  logger("ui")->error("{}", message.toStdString());
  emit failed(message);
}

}  // namespace dfi::ui
