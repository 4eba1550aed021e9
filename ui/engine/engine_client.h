#pragma once
// The GUI's side of `dflash-eval serve` for runs and diagnoses: starts the engine (an
// EngineProcess: locally, or behind a user-given command prefix such as "ssh gpu-host"), sends
// a run or a diagnose request, and writes every record it streams back into a local session
// file that the panels follow, under the engine's own run, step and tensor ids
// (WriterOptions::keepIds), so a step has one id in the engine's file, on the stream and in the
// GUI's. The engine can crash or run out of memory without taking the GUI down: that arrives
// as failed().

#include <map>
#include <memory>
#include <set>

#include <QObject>

#include "engine/engine_process.h"
#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/records.h"

namespace dfi::session {
class Writer;
}

namespace dfi::ui {

class EngineClient : public QObject {
  Q_OBJECT
 public:
  explicit EngineClient(QObject* parent = nullptr);
  ~EngineClient() override;

  // Starts the engine and sends `settings` as a run request; the records are written to
  // `localSession` (replaced if it exists).
  void start(const EngineLaunch& launch, const settings::RunSettings& settings, const QString& localSession);
  // Likewise a diagnosis: its baseline and hypothesis runs stream as a run's records, and the
  // Diagnosis panel reads the diagnosis back from the local session.
  void startDiagnosis(const EngineLaunch& launch, const settings::DiagnoseSettings& settings,
                      const QString& localSession);
  void cancel();
  bool running() const;

 signals:
  void engineReady(const QString& description);  // from the engine's hello
  void sessionCreated(const QString& path);      // the local file exists; open and follow it
  void progress(qint64 done, qint64 total, double etaSeconds, const QString& current);
  void finished(const QString& summary);         // the tau table, one line per run; a diagnosis's runs
  void cancelled(int promptsKept);               // cancel() took effect; what was recorded is kept
  void failed(const QString& message);

 private:
  void startRequest(const EngineLaunch& launch, const protocol::Request& request, const QString& localSession);
  QString describeDiagnosis() const;
  void handleRecord(const protocol::Record& record);
  void handleReply(const protocol::Reply& reply);
  void processEnded(const QString& how, const QString& logTail);
  void fail(const QString& message);
  void closeSession();

  EngineProcess engine_;
  std::unique_ptr<session::Writer> writer_;
  QString localSession_;
  bool done_ = false;
  bool cancelRequested_ = false;
  std::set<std::int64_t> promptsWithSteps_;  // prompts with a recorded step in any run: kept on cancel
  std::set<session::RunId> runs_;  // written already: a run record again is its final update
  std::map<session::RunId, std::string> hypotheses_;  // of a diagnosis's runs, by run
  std::set<session::RunId> runsWithSteps_;
};

}  // namespace dfi::ui
