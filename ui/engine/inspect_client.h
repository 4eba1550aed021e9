#pragma once
// Deep per-block requests to the engine (`dflash-eval serve`'s "inspect": the drafter's
// attention of every layer and head, its masks and the hidden-state statistics of one block),
// sent to an EngineProcess started as EngineClient starts runs (locally or behind a command
// prefix). The server stays up between requests so its models stay loaded. The answer's
// tensors and statistics are appended to the open session file (session::Writer, append mode)
// under the step that was asked about, so reopening the file needs no engine. When that file
// cannot be written (read-only), the records are kept in memory for this run of the GUI
// (stored false). The panels hear the answers through SessionContext.

#include <QObject>

#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"
#include "engine/engine_process.h"
#include "engine/inspect_answer.h"

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
  void keep(protocol::Record record);
  void handleReply(const protocol::Reply& reply);
  void finish();
  void fail(const QString& message);

  EngineLaunch launch_;
  EngineProcess engine_;
  protocol::RequestId nextRequest_ = 1;
  protocol::RequestId active_ = 0;
  QString sessionPath_;
  InspectAnswer answer_;
};

}  // namespace dfi::ui
