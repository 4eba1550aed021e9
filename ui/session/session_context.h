#pragma once
// Owns the open session and the current selection, and tells every registered panel about
// changes (RenderDoc's CaptureContext). Panels read the session only through the checked
// accessors here: a dfi::Error from a corrupt or vanished file becomes one errorOccurred
// signal and a log entry, never an exception inside a paint or a model.

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>

#include "engine/inspect_answer.h"
#include "session/session_source.h"
#include "session/session_viewer.h"
#include "models/tau_convention.h"

class QFileSystemWatcher;
class QTimer;

namespace dfi::protocol {
struct InspectRequest;
}

namespace dfi::ui {

class InspectClient;

class SessionContext : public QObject {
  Q_OBJECT
 public:
  using SourceFactory = std::function<std::unique_ptr<SessionSource>(const QString& path)>;

  explicit SessionContext(SourceFactory factory, QObject* parent = nullptr);
  ~SessionContext() override;

  // Opens `path` through the factory; on failure reports the error and keeps what was open.
  bool open(const QString& path);
  void openSource(std::unique_ptr<SessionSource> source);
  void close();
  bool isOpen() const { return source_ != nullptr; }
  QString path() const;

  void addViewer(SessionViewer* viewer);
  void removeViewer(SessionViewer* viewer);

  const Selection& selection() const { return selection_; }
  void select(const Selection& selection);

  // The tau convention every panel shows (View > Tau Convention).
  TauConvention tauConvention() const { return tauConvention_; }
  void setTauConvention(TauConvention convention);

  // Following: re-read the file when it (or its SQLite WAL) changes, and every second as a
  // fallback for file systems that do not notify.
  void setFollowing(bool following);
  bool isFollowing() const { return following_; }
  void poll();

  // A second, independent reader of the open session, for a worker thread (one SQLite
  // connection per thread); null, after reporting why, when it cannot be opened.
  std::unique_ptr<SessionSource> openSecondSource();
  // Shows an error to the user (errorOccurred) and writes it to the log.
  void reportError(const QString& title, const QString& message);

  // Deep per-block requests ("Fetch from engine") go through here too: a panel asks
  // inspect(), and every panel hears the answer, or why there is none, from the inspect
  // signals, whichever asked. The client is its owner's (the main window's); without one (none
  // set, or it was deleted: a context of its own, as in tests) there is nothing to ask.
  void setInspectClient(InspectClient* client);
  bool canInspect() const;
  bool isInspecting() const;  // an answer is awaited (one request at a time)
  // Sends `request` (inspectRequestFor builds it); the answer is stored into the open session.
  void inspect(const protocol::InspectRequest& request);

  // Checked reads: empty results after reporting an error.
  std::vector<session::RunRecord> runs();
  std::optional<session::RunRecord> run(session::RunId run);
  std::vector<session::PromptRecord> prompts(session::RunId run);
  std::optional<session::PromptRecord> prompt(session::RunId run, session::PromptId prompt);
  // A prompt as the panels name it: its first words ("def fizzbuzz(n):"), else "prompt N".
  QString promptName(session::RunId run, session::PromptId prompt);
  std::vector<session::StepRecord> steps(session::RunId run, session::PromptId prompt);
  std::optional<session::StepRecord> step(session::StepId step);
  std::optional<session::TreeRecord> tree(session::StepId step);
  std::vector<session::StatisticRecord> statistics(session::RunId run, session::StepId step);
  std::vector<session::TensorInfo> tensors(session::RunId run, session::StepId step);
  std::optional<session::TensorRecord> readTensor(session::TensorId tensor);
  // False (after reporting) when the read failed part-way.
  bool forEachStepSummary(session::RunId run, const std::function<void(const session::StepSummary&)>& visit);
  // The run's name as every panel shows it ("drafter-good/live/reference"); "run N" only for a
  // run recorded without one.
  QString runName(session::RunId run);
  // The token's printable text ("␣the", "\\n"); "#id" when the session has no string for it.
  QString tokenText(session::TokenId token);
  // Reads the texts of those of `tokens` not read yet, in one query: a view about to show a
  // block or a response asks for all its tokens first, instead of one query per token.
  void prefetchTokenTexts(std::span<const session::TokenId> tokens);

 signals:
  void sessionOpened();
  void sessionClosed();
  void selectionChanged(const dfi::ui::Selection& selection);
  void stepsAppended(int count);
  void tauConventionChanged(dfi::ui::TauConvention convention);
  void errorOccurred(const QString& title, const QString& message);
  void inspectRequested(qint64 step, const QString& engine);  // `engine`: the program asked
  void inspectAnswered(const dfi::ui::InspectAnswer& answer);
  void inspectFailed(const QString& message);

 private:
  template <class F>
  auto checked(const char* what, F&& read) -> decltype(read());
  void clearCaches();
  void watchFiles();
  void schedulePoll();

  SourceFactory factory_;
  std::unique_ptr<SessionSource> source_;
  std::vector<SessionViewer*> viewers_;
  Selection selection_;
  TauConvention tauConvention_ = TauConvention::Reference;
  std::unordered_map<session::TokenId, QString> tokenTexts_;
  // Every panel reads the selected block, its response, its run and prompt when the selection
  // changes; these keep that to one read each. Cleared when the file gains records.
  std::optional<std::vector<session::RunRecord>> runs_;
  std::unordered_map<session::RunId, std::vector<session::PromptRecord>> prompts_;
  std::optional<session::StepRecord> lastStep_;
  Selection lastResponse_;  // run and prompt of lastResponseSteps_
  std::vector<session::StepRecord> lastResponseSteps_;
  QPointer<InspectClient> inspectClient_;  // not owned
  bool following_ = true;
  int errorCount_ = 0;
  QFileSystemWatcher* watcher_;
  QTimer* pollTimer_;      // the every-second fallback
  QTimer* debounceTimer_;  // coalesces a burst of change notifications into one refresh
};

}  // namespace dfi::ui
