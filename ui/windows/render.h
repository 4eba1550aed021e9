#pragma once
// Headless rendering: the inspector's views of one block of a session written to image files
// (PNG, SVG or PDF by suffix) with no display, for `make demo` on a server, CI artefacts and
// papers. `dflash-eval render` runs this through the inspector executable.

#include <optional>

#include <QString>
#include <QStringList>

#include "widgets/view_export.h"

namespace dfi::ui {

struct RenderRequest {
  QString session;
  QStringList views;              // names from renderableViews()
  std::optional<qint64> step;     // default: the first step of the first run
  QString outputDir;
  QString format = QStringLiteral("png");  // png, svg, pdf; csv for the overview's numbers
  ExportOptions picture;  // size and dpi of every picture; default: each view's own size at 96 dpi
};

// "1600x1000" -> QSize; throws dfi::UsageError naming the option for anything else.
QSize parseExportSize(const QString& text);

// "window", "navigator", "tokens", "mask", "mask-diff", "mask-training-diff", "tree", "compare",
// "attention", "statistics", "diagnosis", "positions", "overview" (also as CSV: the rows of
// `dflash-eval summary --json`).
QStringList renderableViews();

// Writes <outputDir>/<view>.<format> for each view and prints each path; returns the exit
// code (the error is printed to stderr).
int renderViews(const RenderRequest& request);

}  // namespace dfi::ui
