#include "session/session_context.h"

#include <algorithm>
#include <exception>

#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

#include "dfi/base/error.h"
#include "engine/inspect_client.h"
#include "models/navigator_tree.h"
#include "dfi/base/log.h"

namespace dfi::ui {

SessionContext::SessionContext(SourceFactory factory, QObject* parent)
    : QObject(parent),
      factory_(std::move(factory)),
      watcher_(new QFileSystemWatcher(this)),
      pollTimer_(new QTimer(this)),
      debounceTimer_(new QTimer(this)) {
  pollTimer_->setInterval(1000);
  debounceTimer_->setSingleShot(true);
  debounceTimer_->setInterval(150);
  connect(pollTimer_, &QTimer::timeout, this, &SessionContext::poll);
  connect(debounceTimer_, &QTimer::timeout, this, &SessionContext::poll);
  connect(watcher_, &QFileSystemWatcher::fileChanged, this, &SessionContext::schedulePoll);
  // The WAL file appears when the writer starts a transaction; watching the directory
  // notices it (and a file replaced by rename).
  connect(watcher_, &QFileSystemWatcher::directoryChanged, this, [this] {
    watchFiles();
    schedulePoll();
  });
}

SessionContext::~SessionContext() = default;

template <class F>
auto SessionContext::checked(const char* what, F&& read) -> decltype(read()) {
  if (!source_) return {};
  try {
    return read();
  } catch (const dfi::Error& e) {
    reportError(tr("Cannot read the session"),
                tr("While reading %1: %2").arg(QString::fromUtf8(what), QString::fromStdString(e.what())));
  } catch (const std::exception& e) {
    reportError(tr("Cannot read the session"),
                tr("While reading %1: %2").arg(QString::fromUtf8(what), QString::fromStdString(e.what())));
  }
  return {};
}

void SessionContext::reportError(const QString& title, const QString& message) {
  ++errorCount_;
  dfi::logger("ui")->error("{}: {}", title.toStdString(), message.toStdString());
  emit errorOccurred(title, message);
}

bool SessionContext::open(const QString& path) {
  std::unique_ptr<SessionSource> source;
  try {
    source = factory_(path);
  } catch (const std::exception& e) {
    reportError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), QString::fromStdString(e.what()));
    return false;
  }
  if (!source) return false;
  openSource(std::move(source));
  dfi::logger("ui")->info("opened {}", path.toStdString());
  return true;
}

void SessionContext::clearCaches() {
  runs_.reset();
  prompts_.clear();
  lastStep_.reset();
  lastResponse_ = {};
  lastResponseSteps_.clear();
}

void SessionContext::openSource(std::unique_ptr<SessionSource> source) {
  if (source_) close();
  source_ = std::move(source);
  tokenTexts_.clear();
  clearCaches();
  selection_ = {};
  watchFiles();
  if (following_) pollTimer_->start();
  for (SessionViewer* v : viewers_) v->onSessionOpened();
  emit sessionOpened();
}

void SessionContext::close() {
  if (!source_) return;
  pollTimer_->stop();
  debounceTimer_->stop();
  if (!watcher_->files().isEmpty()) watcher_->removePaths(watcher_->files());
  if (!watcher_->directories().isEmpty()) watcher_->removePaths(watcher_->directories());
  selection_ = {};
  source_.reset();
  tokenTexts_.clear();
  clearCaches();
  for (SessionViewer* v : viewers_) v->onSessionClosed();
  emit sessionClosed();
}

std::unique_ptr<SessionSource> SessionContext::openSecondSource() {
  if (!source_ || !factory_) return nullptr;
  try {
    return factory_(path());
  } catch (const std::exception& e) {
    reportError(tr("Cannot read the session"), QString::fromStdString(e.what()));
  }
  return nullptr;
}

QString SessionContext::path() const {
  return source_ ? QString::fromStdString(source_->path()) : QString();
}

void SessionContext::addViewer(SessionViewer* viewer) {
  if (std::find(viewers_.begin(), viewers_.end(), viewer) == viewers_.end()) viewers_.push_back(viewer);
}

void SessionContext::removeViewer(SessionViewer* viewer) {
  viewers_.erase(std::remove(viewers_.begin(), viewers_.end(), viewer), viewers_.end());
}

QString SessionContext::runName(session::RunId runId) {
  const std::optional<session::RunRecord> record = run(runId);
  return record && !record->name.empty() ? QString::fromStdString(record->name) : tr("run %1").arg(runId);
}

void SessionContext::setInspectClient(InspectClient* client) {
  if (inspectClient_) disconnect(inspectClient_, nullptr, this, nullptr);
  inspectClient_ = client;
  if (!client) return;
  connect(client, &InspectClient::requested, this,
          [this, client](qint64 step) { emit inspectRequested(step, client->launch().enginePath); });
  connect(client, &InspectClient::answered, this, &SessionContext::inspectAnswered);
  connect(client, &InspectClient::failed, this, &SessionContext::inspectFailed);
}

bool SessionContext::canInspect() const { return inspectClient_ != nullptr; }

bool SessionContext::isInspecting() const { return inspectClient_ && inspectClient_->busy(); }

void SessionContext::inspect(const protocol::InspectRequest& request) {
  if (inspectClient_ && source_) inspectClient_->inspect(request, path());
}

void SessionContext::setTauConvention(TauConvention convention) {
  if (convention == tauConvention_) return;
  tauConvention_ = convention;
  emit tauConventionChanged(convention);
}

void SessionContext::select(const Selection& selection) {
  if (selection == selection_) return;
  selection_ = selection;
  for (SessionViewer* v : viewers_) v->onSelectionChanged(selection_);
  emit selectionChanged(selection_);
}

void SessionContext::setFollowing(bool following) {
  following_ = following;
  if (following_ && source_) {
    watchFiles();
    pollTimer_->start();
  } else {
    pollTimer_->stop();
  }
}

void SessionContext::watchFiles() {
  if (!source_ || !following_) return;
  const QString file = path();
  const QString wal = file + QStringLiteral("-wal");
  const QString dir = QFileInfo(file).absolutePath();
  for (const QString& p : {file, wal})
    if (QFileInfo::exists(p) && !watcher_->files().contains(p)) watcher_->addPath(p);
  if (!watcher_->directories().contains(dir)) watcher_->addPath(dir);
}

void SessionContext::schedulePoll() {
  if (following_ && source_) debounceTimer_->start();
}

void SessionContext::poll() {
  if (!source_ || !following_) return;
  const int errorsBefore = errorCount_;
  std::vector<session::StepRecord> added = checked("new steps", [&] { return source_->refresh(); });
  if (errorCount_ != errorsBefore) {
    // A file that fails once fails every second; report it once and stop following.
    setFollowing(false);
    return;
  }
  if (added.empty()) return;
  clearCaches();
  for (SessionViewer* v : viewers_) v->onStepsAppended(added);
  emit stepsAppended(static_cast<int>(added.size()));
}

std::vector<session::RunRecord> SessionContext::runs() {
  if (!runs_ && source_) {
    const int errorsBefore = errorCount_;
    std::vector<session::RunRecord> read = checked("the runs", [&] { return source_->runs(); });
    if (errorCount_ != errorsBefore) return {};
    runs_ = std::move(read);
  }
  return runs_ ? *runs_ : std::vector<session::RunRecord>{};
}

std::optional<session::RunRecord> SessionContext::run(session::RunId id) {
  if (!runs_) runs();  // fills the cache, or reports why it could not
  if (runs_)
    for (const session::RunRecord& r : *runs_)
      if (r.runId == id) return r;
  return std::nullopt;
}

std::vector<session::PromptRecord> SessionContext::prompts(session::RunId run) {
  if (auto it = prompts_.find(run); it != prompts_.end()) return it->second;
  const int errorsBefore = errorCount_;
  std::vector<session::PromptRecord> read = checked("the prompts", [&] { return source_->prompts(run); });
  if (errorCount_ == errorsBefore && source_) prompts_.emplace(run, read);
  return read;
}

std::optional<session::PromptRecord> SessionContext::prompt(session::RunId run, session::PromptId id) {
  // From the cache in place: a copy of a run's every prompt (token arrays and all) per lookup
  // cost milliseconds at each selection of a large session.
  auto find = [id](const std::vector<session::PromptRecord>& list) -> std::optional<session::PromptRecord> {
    for (const session::PromptRecord& p : list)
      if (p.promptId == id) return p;
    return std::nullopt;
  };
  if (const auto it = prompts_.find(run); it != prompts_.end()) return find(it->second);
  return find(prompts(run));
}

QString SessionContext::promptName(session::RunId run, session::PromptId id) {
  const std::optional<session::PromptRecord> record = prompt(run, id);
  return promptLabel(id, record ? QString::fromStdString(record->text) : QString());
}

std::vector<session::StepRecord> SessionContext::steps(session::RunId run, session::PromptId prompt) {
  const Selection response{run, prompt, 0};
  if (source_ && lastResponse_ == response) return lastResponseSteps_;
  const int errorsBefore = errorCount_;
  std::vector<session::StepRecord> read = checked("the steps", [&] { return source_->steps(run, prompt); });
  if (errorCount_ == errorsBefore && source_) {
    lastResponse_ = response;
    lastResponseSteps_ = read;
  }
  return read;
}

std::optional<session::StepRecord> SessionContext::step(session::StepId id) {
  if (lastStep_ && lastStep_->stepId == id) return lastStep_;
  std::optional<session::StepRecord> read = checked("a step", [&] { return source_->step(id); });
  if (read) lastStep_ = read;
  return read;
}

std::optional<session::TreeRecord> SessionContext::tree(session::StepId id) {
  return checked("a tree", [&] { return source_->tree(id); });
}

std::vector<session::StatisticRecord> SessionContext::statistics(session::RunId run, session::StepId step) {
  return checked("the statistics", [&] { return source_->statistics(run, step); });
}

std::vector<session::TensorInfo> SessionContext::tensors(session::RunId run, session::StepId step) {
  return checked("the tensors", [&] { return source_->tensors(run, step); });
}

std::optional<session::TensorRecord> SessionContext::readTensor(session::TensorId tensor) {
  return checked("a tensor", [&] { return source_->readTensor(tensor); });
}

bool SessionContext::forEachStepSummary(session::RunId run,
                                        const std::function<void(const session::StepSummary&)>& visit) {
  return checked("the steps of a run", [&] {
    source_->forEachStepSummary(run, visit);
    return true;
  });
}

void SessionContext::prefetchTokenTexts(std::span<const session::TokenId> tokens) {
  std::vector<session::TokenId> unread;
  for (const session::TokenId token : tokens)
    if (token >= 0 && !tokenTexts_.contains(token)) unread.push_back(token);
  if (unread.empty()) return;
  std::sort(unread.begin(), unread.end());
  unread.erase(std::unique(unread.begin(), unread.end()), unread.end());
  for (const session::TokenString& s : checked("token strings", [&] { return source_->tokenStrings(unread); }))
    tokenTexts_.emplace(s.tokenId, QString::fromStdString(s.display));
  // The ones the session has no string for, as tokenText says them.
  for (const session::TokenId token : unread) tokenTexts_.emplace(token, QStringLiteral("#%1").arg(token));
}

QString SessionContext::tokenText(session::TokenId token) {
  // A token the records do not have (an imported run's slots past what the other pipeline kept).
  if (token < 0) return QStringLiteral("?");
  prefetchTokenTexts({&token, 1});
  return tokenTexts_.at(token);
}

}  // namespace dfi::ui
