#pragma once
// Saving what a panel shows as PNG, SVG or PDF (by the file's suffix), at a chosen size and
// resolution. QCustomPlot views are laid out again at that size and re-rendered, as vectors
// for SVG and PDF (savePdf, QSvgGenerator through QCPPainter), heatmaps with their cells at
// full resolution (HeatmapPlot::setVectorExport); other widgets are rendered through
// QWidget::render, which also gives vectors for SVG and PDF.

#include <QSize>

#include <functional>
#include <vector>

#include <QString>
#include <QStringList>

class QAbstractItemModel;
class QWidget;

namespace dfi::ui {

// The numbers a plot draws, for "Save data as CSV".
struct CsvTable {
  QStringList header;
  std::vector<QStringList> rows;
  bool isEmpty() const { return header.isEmpty(); }
};

// A panel that can be exported implements this; the main window exports the active one.
class ExportableView {
 public:
  virtual ~ExportableView() = default;
  virtual QWidget* exportTarget() = 0;       // the plot or widget to save
  virtual QString exportBaseName() const = 0;  // suggested file name without suffix
  // The panel's numbers for a .csv export; empty when it has none to offer.
  virtual CsvTable exportData() { return {}; }
};

// The picture's size and resolution. A PNG is `size` pixels with a `dpi` tag; an SVG is `size`
// pixels at `dpi`; a PDF page is size x 96 / dpi points (its vectors need no more). The view is laid out as on a screen of 96
// dpi at size x 96 / dpi, so at 300 dpi a 3000-pixel-wide picture has the proportions of a
// 960-pixel panel and its text is sharp in print. An empty size: the widget's on-screen size
// (times dpi / 96). Plots take any size; another widget is resized only when it is a window
// of its own, and otherwise keeps its own proportions, scaled to the width asked for.
struct ExportOptions {
  QSize size;
  double dpi = 96;
};

// Throws dfi::UsageError for an unknown suffix or bad options and dfi::IoError when writing fails.
void exportWidget(QWidget* widget, const QString& path, const ExportOptions& options = {});

// "PNG image (*.png);;SVG ...": the file dialog filter of the supported formats.
QString exportFileFilter();

// RFC 4180 CSV (fields with commas, quotes or line breaks quoted). Throws dfi::IoError.
void writeCsv(const CsvTable& table, const QString& path);

// A table model's header and display texts (top-level rows), as the view shows them.
CsvTable csvOf(const QAbstractItemModel& model);

// A right-click menu on `widget`: save its picture as PNG, SVG or PDF and, when `data` is
// given, its numbers as CSV. Errors go to a message box and the log.
void addExportMenu(QWidget* widget, const QString& baseName, std::function<CsvTable()> data = {});

}  // namespace dfi::ui
