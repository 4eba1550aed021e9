#include "engine/log_relay.h"

#include <mutex>

#include <spdlog/sinks/base_sink.h>

#include "dfi/base/log.h"

namespace dfi::ui {

// The state the sink and the relay share. `relay` is cleared by the relay's destructor under
// the mutex, so the sink never posts to a deleted object.
struct LogRelay::Shared {
  std::mutex mutex;
  LogRelay* relay = nullptr;
  QVector<LogLine> pending;
  bool drainPosted = false;
};

namespace {

class RelaySink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit RelaySink(std::shared_ptr<LogRelay::Shared> shared) : shared_(std::move(shared)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    LogLine line;
    line.time = QDateTime::fromMSecsSinceEpoch(
        std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch()).count());
    line.level = static_cast<int>(msg.level);
    line.logger = QString::fromUtf8(msg.logger_name.data(), static_cast<qsizetype>(msg.logger_name.size()));
    line.text = QString::fromUtf8(msg.payload.data(), static_cast<qsizetype>(msg.payload.size()));
    std::lock_guard lock(shared_->mutex);
    if (!shared_->relay) return;
    shared_->pending.push_back(std::move(line));
    if (shared_->drainPosted) return;
    shared_->drainPosted = true;
    QMetaObject::invokeMethod(shared_->relay, "drain", Qt::QueuedConnection);
  }
  void flush_() override {}

 private:
  std::shared_ptr<LogRelay::Shared> shared_;
};

}  // namespace

LogRelay::LogRelay(QObject* parent) : QObject(parent), shared_(std::make_shared<Shared>()) {
  shared_->relay = this;
  dfi::addLogSink(std::make_shared<RelaySink>(shared_));
}

LogRelay::~LogRelay() {
  std::lock_guard lock(shared_->mutex);
  shared_->relay = nullptr;
  shared_->pending.clear();
}

void LogRelay::drain() {
  QVector<LogLine> lines;
  {
    std::lock_guard lock(shared_->mutex);
    lines.swap(shared_->pending);
    shared_->drainPosted = false;
  }
  if (!lines.isEmpty()) emit linesArrived(lines);
}

}  // namespace dfi::ui
