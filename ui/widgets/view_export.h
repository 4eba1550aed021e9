#pragma once
// Saving what a panel shows as PNG, SVG or PDF (by the file's suffix). QCustomPlot views are
// re-rendered as vectors (savePdf, QSvgGenerator through QCPPainter); other widgets are
// rendered through QWidget::render, which also gives vectors for SVG and PDF.

#include <QString>

class QWidget;

namespace dfi::ui {

// A panel that can be exported implements this; the main window exports the active one.
class ExportableView {
 public:
  virtual ~ExportableView() = default;
  virtual QWidget* exportTarget() = 0;       // the plot or widget to save
  virtual QString exportBaseName() const = 0;  // suggested file name without suffix
};

// Throws dfi::UsageError for an unknown suffix and dfi::IoError when writing fails.
void exportWidget(QWidget* widget, const QString& path);

// "PNG image (*.png);;SVG ...": the file dialog filter of the supported formats.
QString exportFileFilter();

}  // namespace dfi::ui
