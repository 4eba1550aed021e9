#pragma once
// Deep per-block requests to the engine (`dflash-eval serve`'s "inspect": the drafter's
// attention of every layer and head, its masks and the hidden-state statistics of one block),
// started the way EngineClient starts runs (a QProcess, locally or behind a command prefix).
// The server stays up between requests so its models stay loaded. The answer's tensors and
// statistics are appended to the open session file (session::Writer, append mode) under the
// step that was asked about, so reopening the file needs no engine. When that file cannot be
// written (read-only), the records are kept in memory for this run of the GUI (stored false).

#include <memory>
#include <vector>

#include <QMetaType>
#include <QObject>
#include <QProcess>

#include "context/engine_client.h"
#include "dfi/protocol/frame.h"
#include "dfi/protocol/messages.h"
#include "dfi/session/records.h"

namespace dfi::ui {

struct InspectAnswer {
  session::RunId run = 0;
  session::StepId step = 0;
  std::vector<session::TensorRecord> tensors;
  std::vector<session::StatisticRecord> statistics;
  bool stored = false;    // written into the session file
  QString storeError;     // why not, when not
};

}  // namespace dfi::ui

Q_DECLARE_METATYPE(dfi::ui::InspectAnswer)

namespace dfi::ui {

class InspectClient : public QObject {
  Q_OBJECT
 public:
  explicit InspectClient(QObject* parent = nullptr);
  ~InspectClient() override;

  void setLaunch(const EngineLaunch& launch);
  const EngineLaunch& launch() const { return launch_; }
  // Sends `request` (as inspectRequestFor builds it; its request id is set here) and appends the
  // answer to `sessionPath` keyed by (run, step). One request at a time.
  void inspect(protocol::InspectRequest request, const QString& sessionPath);
  bool busy() const { return active_ != 0; }
  void stop();

 signals:
  void requested(qint64 step);  // an inspect of `step` was sent (any view may have asked)
  void answered(const dfi::ui::InspectAnswer& answer);
  void failed(const QString& message);

 private:
  void readOutput();
  void handleFrame(const protocol::Frame& frame);
  void handleReply(const protocol::Reply& reply);
  void finish();
  void fail(const QString& message);

  EngineLaunch launch_;
  QProcess process_;
  std::unique_ptr<protocol::FrameDecoder> decoder_;
  protocol::RequestId nextRequest_ = 1;
  protocol::RequestId active_ = 0;
  QString sessionPath_;
  InspectAnswer answer_;
  QString stderrTail_;
};

}  // namespace dfi::ui
