#include "panels/log_dock.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace dfi::ui {
namespace {

constexpr int kMaxLines = 5000;

// spdlog level numbers: trace 0, debug 1, info 2, warn 3, error 4, critical 5.
QString levelName(int level) {
  static const char* names[] = {"trace", "debug", "info", "warning", "error", "critical"};
  return level >= 0 && level < 6 ? QString::fromLatin1(names[level]) : QString::number(level);
}

QString levelColour(int level) {
  if (level >= 4) return QStringLiteral("#c62828");
  if (level == 3) return QStringLiteral("#b26a00");
  if (level <= 1) return QStringLiteral("#777777");
  return {};
}

}  // namespace

LogDock::LogDock(QWidget* parent)
    : QDockWidget(tr("Log"), parent),
      relay_(new LogRelay(this)),
      minimumLevel_(new QComboBox),
      text_(new QPlainTextEdit) {
  setObjectName(QStringLiteral("LogDock"));
  text_->setReadOnly(true);
  text_->setMaximumBlockCount(kMaxLines);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  for (int level = 0; level < 6; ++level) minimumLevel_->addItem(levelName(level), level);
  minimumLevel_->setCurrentIndex(2);
  auto* clear = new QPushButton(tr("Clear"));
  connect(clear, &QPushButton::clicked, text_, &QPlainTextEdit::clear);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Show from")));
  bar->addWidget(minimumLevel_);
  bar->addStretch();
  bar->addWidget(clear);
  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(bar);
  layout->addWidget(text_);
  setWidget(body);
  connect(relay_, &LogRelay::linesArrived, this, &LogDock::append);
}

QString LogDock::plainText() const { return text_->toPlainText(); }

void LogDock::append(const QVector<LogLine>& lines) {
  const int minimum = minimumLevel_->currentData().toInt();
  for (const LogLine& line : lines) {
    if (line.level < minimum) continue;
    const QString text = QStringLiteral("%1 [%2] %3: %4")
                             .arg(line.time.toString(QStringLiteral("HH:mm:ss.zzz")), line.logger,
                                  levelName(line.level), line.text.toHtmlEscaped());
    const QString colour = levelColour(line.level);
    text_->appendHtml(colour.isEmpty() ? text
                                       : QStringLiteral("<span style=\"color:%1\">%2</span>").arg(colour, text));
  }
}

}  // namespace dfi::ui
