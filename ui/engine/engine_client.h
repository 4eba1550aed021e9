#pragma once
// The GUI's side of `dflash-eval serve` for runs and diagnoses: starts the engine (an
// EngineProcess: locally, or behind a user-given command prefix such as "ssh gpu-host"), sends
// a run or a diagnose request, and writes every record it streams back into a local session
// file that the panels follow, under the engine's own run, step and tensor ids
// (WriterOptions::keepIds), shifted past the session's own when appending. The session is
// opened only when the first record arrives: an engine that refuses the request (a wrong path,
// a model it cannot load) leaves every file as it was. The engine can crash or run out of
// memory without taking the GUI down: that arrives as failed(), with what was recorded kept.

#include <map>
#include <memory>
#include <set>

#include <QObject>

#include "engine/engine_process.h"
#include "dfi/protocol/messages.h"
#include "dfi/protocol/record_codec.h"
#include "dfi/session/id_shift.h"
#include "dfi/session/records.h"
#include "dfi/session/writer.h"

namespace dfi::ui {

class EngineClient : public QObject {
  Q_OBJECT
 public:
  explicit EngineClient(QObject* parent = nullptr);
  ~EngineClient() override;

  // Starts the engine and sends `settings` as a run request; the records are written to
  // `localSession` as `mode` says: CreateNew refuses an existing file before starting, Append
  // adds to it (or creates it), Overwrite replaces it once the first record arrives.
  void start(const EngineLaunch& launch, const settings::RunSettings& settings, const QString& localSession,
             session::OpenMode mode = session::OpenMode::CreateNew);
  // Likewise a diagnosis: its baseline and hypothesis runs stream as a run's records, and the
  // Diagnosis panel reads the diagnosis back from the local session.
  void startDiagnosis(const EngineLaunch& launch, const settings::DiagnoseSettings& settings,
                      const QString& localSession, session::OpenMode mode = session::OpenMode::CreateNew);
  void cancel();
  // Quitting mid-run: cancels, waits up to `waitMs` for the engine to answer (a prompt in
  // progress may take longer, then the engine is stopped), and closes the local session with
  // everything it received.
  void stop(int waitMs);
  bool running() const;

 signals:
  void engineReady(const QString& description);  // from the engine's hello
  void sessionCreated(const QString& path);      // the first record is in the local file; open and follow it
  void progress(qint64 done, qint64 total, double etaSeconds, const QString& current);
  void finished(const QString& summary);         // the CLI's tau table and paired differences; a diagnosis's runs
  void cancelled(int promptsKept);               // cancel() took effect; what was recorded is kept
  void failed(const QString& message);

 private:
  void startRequest(const EngineLaunch& launch, const protocol::Request& request, const QString& localSession,
                    session::OpenMode mode);
  bool openSession();  // at the first record
  void write(const protocol::Record& record);
  QString describeDiagnosis() const;
  void handleRecord(const protocol::Record& record);
  void handleReply(const protocol::Reply& reply);
  void processEnded(const QString& how, const QString& logTail);
  void fail(const QString& message);
  void closeSession();

  EngineProcess engine_;
  std::unique_ptr<session::Writer> writer_;
  QString localSession_;
  session::OpenMode sessionMode_ = session::OpenMode::CreateNew;
  session::IdShift shift_;  // the engine's ids moved past the session's own (appending)
  bool recordingFailed_ = false;  // the local session refused a record: the rest is dropped
  bool done_ = false;
  bool cancelRequested_ = false;
  std::set<std::int64_t> promptsWithSteps_;  // prompts with a recorded step in any run: kept on cancel
  std::set<session::RunId> runs_;  // written already: a run record again is its final update
  std::map<session::RunId, std::string> hypotheses_;  // of a diagnosis's runs, by run
  std::set<session::RunId> runsWithSteps_;
};

}  // namespace dfi::ui
