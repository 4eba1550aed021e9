#pragma once
// The log panel: every library's spdlog output (through LogRelay), newest at the bottom,
// with a minimum level and a line cap so a flood cannot eat the memory.

#include <QDockWidget>
#include <QVector>

#include "engine/log_relay.h"

class QComboBox;
class QPlainTextEdit;

namespace dfi::ui {

class LogDock : public QDockWidget {
  Q_OBJECT
 public:
  explicit LogDock(QWidget* parent = nullptr);

  QString plainText() const;  // what is shown, for tests and "copy all"

 private:
  void append(const QVector<LogLine>& lines);

  LogRelay* relay_;
  QComboBox* minimumLevel_;
  QPlainTextEdit* text_;
};

}  // namespace dfi::ui
