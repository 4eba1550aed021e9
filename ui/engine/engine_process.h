#pragma once
// One `dflash-eval serve` child process, as both engine clients run it (EngineClient for runs
// and diagnoses, InspectClient for per-block requests): started locally or behind a user-given
// command prefix such as "ssh gpu-host", requests written to its stdin, its stdout decoded into
// frames whose records and replies go to the owner's handlers, its stderr forwarded to the log
// (the end kept for error messages), its hello checked against this GUI's protocol version.
// What the frames and the engine's exit mean is the owner's. The engine can crash or run out of
// memory without taking the GUI down: that arrives as exited().

#include <functional>
#include <memory>

#include <QObject>
#include <QProcess>
#include <QStringList>

#include "dfi/protocol/frame.h"
#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"

namespace dfi::ui {

struct EngineLaunch {
  QStringList commandPrefix;  // e.g. {"ssh", "gpu-host"}; empty: local
  // Locally, a bare name is located (engine_locator.h).
  QString enginePath = QStringLiteral("dflash-eval");
};

// "dflash-eval 1.2 (git abc), libtorch 2.11, CUDA ...": what the engine's hello says it is.
QString describeEngine(const protocol::Hello& hello);

class EngineProcess : public QObject {
  Q_OBJECT
 public:
  // Called for each frame as it is decoded. A handler may throw (a record its owner cannot
  // keep): the engine is then killed and failed() says why, as for output that cannot be read.
  struct Handlers {
    std::function<void(protocol::Record record)> record;
    // A hello only of this protocol version.
    std::function<void(const protocol::Reply& reply)> reply;
  };

  explicit EngineProcess(Handlers handlers, QObject* parent = nullptr);
  ~EngineProcess() override;  // kills a running engine without a signal: its owner is going away

  // Chooses the program start() runs: behind a command prefix the path as given (it names a
  // file on the other machine); locally a bare "dflash-eval" is located. False, with `error`
  // saying what was tried, when there is none. Apart from start() so that an owner prepares
  // for the records (a local file it replaces) only when there is an engine to send them.
  bool locate(const EngineLaunch& launch, QString* error);
  // Starts the located program's `serve`; one that cannot be started is failed().
  void start();
  bool running() const;
  void send(const protocol::Request& request);
  void closeInput();  // the engine exits at the end of its input
  // Closes its input and gives it a second to exit, then kills it.
  void stop();

 signals:
  // It could not be started, or its output could not be read (it is killed then).
  void failed(const QString& message);
  // It ended, after failed() too: `how` is "crashed" or "exited with code N"; `logTail` the
  // end of what it wrote to stderr.
  void exited(const QString& how, const QString& logTail);

 private:
  void readOutput();
  void readFrame(const protocol::Frame& frame);
  void readLog();

  Handlers handlers_;
  QProcess process_;
  QStringList commandPrefix_;  // as located
  QString program_;
  std::unique_ptr<protocol::FrameDecoder> decoder_;
  QString stderrTail_;
};

}  // namespace dfi::ui
