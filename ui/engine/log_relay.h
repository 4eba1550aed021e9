#pragma once
// Brings spdlog messages from every library and every thread to the GUI thread. The sink
// (registered with dfi::addLogSink) only appends to a queue and posts one queued call per
// burst, so a flood of messages costs one event, not one per line (hotspot #167).

#include <memory>

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QVector>

namespace dfi::ui {

struct LogLine {
  QDateTime time;
  int level = 0;  // spdlog::level::level_enum
  QString logger;
  QString text;
};

class LogRelay : public QObject {
  Q_OBJECT
 public:
  // Registers a sink with every dfi logger for the lifetime of this object.
  explicit LogRelay(QObject* parent = nullptr);
  ~LogRelay() override;

  struct Shared;  // the queue the sink fills (defined in the .cpp)

 signals:
  void linesArrived(const QVector<dfi::ui::LogLine>& lines);

 private slots:
  void drain();  // posted by the sink; runs on the GUI thread

 private:
  std::shared_ptr<Shared> shared_;  // also held by the sink, which outlives this object
};

}  // namespace dfi::ui
