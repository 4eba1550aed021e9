#include "engine/engine_process.h"

#include <sstream>

#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "engine/engine_locator.h"

namespace dfi::ui {
namespace {

// Why this GUI cannot talk to that engine (another protocol version); empty when it can.
QString protocolMismatch(const protocol::Hello& h) {
  if (h.protocol == protocol::kProtocolVersion) return {};
  return QStringLiteral(
             "the engine (%1) speaks protocol version %2, this GUI version %3: install the same "
             "version of dflash-eval and dflash-inspector")
      .arg(describeEngine(h))
      .arg(h.protocol)
      .arg(protocol::kProtocolVersion);
}

// "could not start the engine (program): reason", and where to choose another.
QString cannotStartMessage(const QString& program, const QString& reason) {
  return QStringLiteral(
             "could not start the engine (%1): %2\nChoose the dflash-eval executable in "
             "File > Run Evaluation > Engine, or set the environment variable DFLASH_EVAL to it.")
      .arg(program, reason);
}

}  // namespace

QString describeEngine(const protocol::Hello& h) {
  return QStringLiteral("dflash-eval %1 (git %2), libtorch %3, CUDA %4")
      .arg(QString::fromStdString(h.engineVersion), QString::fromStdString(h.git),
           QString::fromStdString(h.torch),
           h.cudaAvailable ? QStringLiteral("available (%1 devices)").arg(h.cudaDevices)
                           : QStringLiteral("not available"));
}

EngineProcess::EngineProcess(Handlers handlers, QObject* parent)
    : QObject(parent), handlers_(std::move(handlers)) {
  connect(&process_, &QProcess::readyReadStandardOutput, this, &EngineProcess::readOutput);
  connect(&process_, &QProcess::readyReadStandardError, this, &EngineProcess::readLog);
  connect(&process_, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
    if (decoder_) readOutput();  // what it wrote last, before saying how it ended
    QString how = status == QProcess::CrashExit ? QStringLiteral("crashed") : QStringLiteral("exited with code %1").arg(exitCode);
    // Bytes of a frame the engine did not finish writing: dropped, and said so.
    if (decoder_ && !decoder_->idle()) how += QStringLiteral(" in the middle of a frame (its last record is lost)");
    emit exited(how, stderrTail_.trimmed());
  });
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart)
      emit failed(cannotStartMessage(process_.program(), process_.errorString()));
  });
}

EngineProcess::~EngineProcess() {
  if (!running()) return;
  process_.disconnect(this);
  process_.kill();
  process_.waitForFinished(2000);
}

bool EngineProcess::locate(const EngineLaunch& launch, QString* error) {
  QString program = launch.enginePath.trimmed();
  if (launch.commandPrefix.isEmpty() && needsLocating(program)) {
    const EngineLocation location = locateEngine();
    if (!location.found()) {
      *error = location.notFoundMessage();
      return false;
    }
    program = location.path;
  }
  // Behind a prefix nothing is located (the path names a file on the other machine).
  if (program.isEmpty()) {
    *error = QStringLiteral("no engine path is given to run behind \"%1\"")
                 .arg(launch.commandPrefix.join(' '));
    return false;
  }
  commandPrefix_ = launch.commandPrefix;
  program_ = program;
  return true;
}

void EngineProcess::start() {
  decoder_ = std::make_unique<protocol::FrameDecoder>("engine (" + program_.toStdString() + ")");
  stderrTail_.clear();
  QStringList command = commandPrefix_;
  command << program_ << QStringLiteral("serve");
  process_.start(command.front(), command.mid(1));
}

bool EngineProcess::running() const { return process_.state() != QProcess::NotRunning; }

void EngineProcess::send(const protocol::Request& request) {
  std::ostringstream line;
  protocol::writeFrame(line, protocol::encodeMessage(request));
  process_.write(line.view().data(), static_cast<qint64>(line.view().size()));
}

void EngineProcess::closeInput() { process_.closeWriteChannel(); }

void EngineProcess::stop() {
  if (!running()) return;
  process_.closeWriteChannel();
  if (!process_.waitForFinished(1000)) {
    process_.kill();
    process_.waitForFinished(2000);
  }
}

void EngineProcess::readOutput() {
  try {
    decoder_->feed(process_.readAllStandardOutput().toStdString());
    while (auto frame = decoder_->next()) readFrame(*frame);
  } catch (const std::exception& e) {
    // A malformed stream, another protocol, or a frame the owner cannot keep: stop this engine
    // (its owner keeps what it had), never let the exception reach the event loop.
    emit failed(QStringLiteral("the engine's output could not be read: %1")
                    .arg(QString::fromStdString(e.what())));
    process_.kill();
  }
}

void EngineProcess::readFrame(const protocol::Frame& frame) {
  if (protocol::isRecordFrame(frame))
    return handlers_.record(protocol::decodeRecord(frame, "engine"));
  const protocol::Reply reply = protocol::decodeReply(frame, "engine");
  if (const auto* hello = std::get_if<protocol::Hello>(&reply))
    if (const QString mismatch = protocolMismatch(*hello); !mismatch.isEmpty())
      throw Error(mismatch.toStdString());
  handlers_.reply(reply);
}

void EngineProcess::readLog() {
  // Keep the end of the engine's log for the error messages; forward it to the log dock.
  const QString text = QString::fromUtf8(process_.readAllStandardError());
  stderrTail_ = (stderrTail_ + text).right(4000);
  for (const QString& line : text.split('\n', Qt::SkipEmptyParts))
    logger("engine")->info("{}", line.toStdString());
}

}  // namespace dfi::ui
