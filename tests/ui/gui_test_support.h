#pragma once
// Shared helpers of the GUI tests: where screenshots go, settings isolated from the user's,
// a session file opened as the main window opens it, and a tolerant colour comparison for pixel
// checks (anti-aliasing and themes differ).

#include <memory>

#include <QColor>
#include <QDir>
#include <QStandardPaths>
#include <QString>
#include <QWidget>
#include <qcustomplot.h>

#include "session/file_session_source.h"
#include "session/session_context.h"

namespace dfi::ui::test {

// Keeps QSettings (layout, recent files) of the tests away from the user's.
inline void isolateSettings() { QStandardPaths::setTestModeEnabled(true); }

// Saves `widget` as <build>/screenshots/<name>.png and returns the path.
inline QString saveScreenshot(QWidget* widget, const QString& name) {
  const QString dir = QStringLiteral(DFI_BINARY_DIR "/screenshots");
  QDir().mkpath(dir);
  // Plots repaint on a queued replot; draw the current data now so the grab is not stale.
  for (QCustomPlot* plot : widget->findChildren<QCustomPlot*>()) plot->replot();
  if (auto* plot = qobject_cast<QCustomPlot*>(widget)) plot->replot();
  const QString path = dir + QLatin1Char('/') + name + QStringLiteral(".png");
  widget->grab().save(path);
  return path;
}

// A context on the session file at `path`, read as the main window reads it; null when it does
// not open (the context has reported why).
inline std::unique_ptr<SessionContext> openSession(const QString& path) {
  auto context = std::make_unique<SessionContext>(
      [](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
  if (!context->open(path)) return nullptr;
  return context;
}

inline bool similarColour(const QColor& a, const QColor& b, int tolerance = 12) {
  return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance &&
         std::abs(a.blue() - b.blue()) <= tolerance;
}

}  // namespace dfi::ui::test
