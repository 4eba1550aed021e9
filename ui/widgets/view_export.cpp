#include "widgets/view_export.h"

#include <QAbstractItemModel>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QLayout>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QWidget>
#include <qcustomplot.h>

#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "widgets/export_options_dialog.h"
#include "widgets/heatmap_plot.h"

namespace dfi::ui {
namespace {

constexpr double kScreenDpi = 96;

// What is drawn, at what logical size, and how much bigger the output is.
struct Geometry {
  QSize logical;  // the layout size, in pixels of a 96-dpi screen
  QSize output;   // pixels of a PNG, the SVG's size
  double scale = 1;
};

Geometry geometryFor(const QWidget* widget, const ExportOptions& options) {
  if (!(options.dpi >= 10 && options.dpi <= 2400))
    throw UsageError("export resolution " + std::to_string(options.dpi) + " dpi is outside 10..2400");
  if (options.size.isValid() && (options.size.width() < 16 || options.size.height() < 16 ||
                                 options.size.width() > 20000 || options.size.height() > 20000))
    throw UsageError("export size " + std::to_string(options.size.width()) + "x" +
                     std::to_string(options.size.height()) + " is outside 16..20000 pixels a side");
  Geometry g;
  g.scale = options.dpi / kScreenDpi;
  if (options.size.isValid()) {
    g.output = options.size;
    g.logical = QSize(std::max(1, qRound(options.size.width() / g.scale)), std::max(1, qRound(options.size.height() / g.scale)));
  } else {
    g.logical = widget->size();
    g.output = QSize(qRound(widget->width() * g.scale), qRound(widget->height() * g.scale));
  }
  return g;
}

// A heatmap's cells at full resolution while a vector painter draws it.
struct VectorCells {
  explicit VectorCells(QWidget* widget) : plot(qobject_cast<HeatmapPlot*>(widget)) {
    if (plot) plot->setVectorExport(true);
  }
  ~VectorCells() {
    if (plot) plot->setVectorExport(false);
  }
  HeatmapPlot* plot;
};

// A widget that is not a plot is drawn at its own size: resized for the picture when it is a
// window of its own (restored after), else scaled to the width asked for.
template <class Draw>
void drawWidget(QWidget* widget, const Geometry& g, Draw draw) {
  const QSize before = widget->size();
  if (widget->isWindow() && g.logical != before) {
    widget->resize(g.logical);
    if (QLayout* layout = widget->layout()) layout->activate();
  }
  draw(static_cast<double>(g.output.width()) / widget->width());
  if (widget->size() != before) widget->resize(before);
}

void renderPng(QWidget* widget, const QString& path, const Geometry& g, double dpi) {
  if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
    if (!plot->savePng(path, g.logical.width(), g.logical.height(), g.scale, -1, qRound(dpi), QCP::ruDotsPerInch))
      throw IoError("cannot write the PNG image", {path.toStdString(), {}, {}});
    return;
  }
  QImage image;
  drawWidget(widget, g, [&](double scale) {
    image = QImage(g.output.width(), qRound(widget->height() * scale), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.scale(scale, scale);
    widget->render(&painter);
  });
  const int dotsPerMeter = qRound(dpi / 0.0254);
  image.setDotsPerMeterX(dotsPerMeter);
  image.setDotsPerMeterY(dotsPerMeter);
  if (!image.save(path, "PNG")) throw IoError("cannot write the PNG image", {path.toStdString(), {}, {}});
}

void renderSvg(QWidget* widget, const QString& path, const Geometry& g, double dpi) {
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setResolution(qRound(dpi));
  svg.setTitle(widget->windowTitle());
  if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
    svg.setSize(g.output);
    svg.setViewBox(QRect(QPoint(0, 0), g.logical));
    const VectorCells cells(widget);
    QCPPainter painter(&svg);
    plot->toPainter(&painter, g.logical.width(), g.logical.height());
    return;
  }
  drawWidget(widget, g, [&](double scale) {
    svg.setSize(QSize(g.output.width(), qRound(widget->height() * scale)));
    svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
    QPainter painter(&svg);
    widget->render(&painter);
  });
}

void renderPdf(QWidget* widget, const QString& path, const Geometry& g) {
  if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
    const VectorCells cells(widget);
    if (!plot->savePdf(path, g.logical.width(), g.logical.height()))
      throw IoError("cannot write the PDF", {path.toStdString(), {}, {}});
    return;
  }
  drawWidget(widget, g, [&](double scale) {
    // Points: the logical size, one layout pixel a point, as savePdf does for plots.
    const double toLogical = scale / g.scale;
    QPdfWriter pdf(path);
    pdf.setPageSize(QPageSize(QSizeF(widget->width() * toLogical, widget->height() * toLogical), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setResolution(72);
    QPainter painter(&pdf);
    painter.scale(toLogical, toLogical);
    widget->render(&painter);
  });
}

}  // namespace

void exportWidget(QWidget* widget, const QString& path, const ExportOptions& options) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  const Geometry g = geometryFor(widget, options);
  if (suffix == QLatin1String("png")) {
    renderPng(widget, path, g, options.dpi);
  } else if (suffix == QLatin1String("svg")) {
    renderSvg(widget, path, g, options.dpi);
  } else if (suffix == QLatin1String("pdf")) {
    renderPdf(widget, path, g);
  } else {
    throw UsageError("unknown export format '." + suffix.toStdString() + "' (use .png, .svg or .pdf)");
  }
  if (!QFileInfo(path).isFile() || QFileInfo(path).size() == 0)
    throw IoError("nothing was written", {path.toStdString(), {}, {}});
}

QString exportFileFilter() {
  return QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)");
}

void writeCsv(const CsvTable& table, const QString& path) {
  auto field = [](const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')) &&
        !text.contains(QLatin1Char('\r')))
      return text;
    QString quoted = text;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
  };
  auto line = [&](const QStringList& cells) {
    QStringList out;
    for (const QString& c : cells) out << field(c);
    return out.join(QLatin1Char(',')) + QStringLiteral("\r\n");
  };
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    throw IoError("cannot write the CSV file: " + file.errorString().toStdString(), {path.toStdString(), {}, {}});
  QString text = line(table.header);
  for (const QStringList& row : table.rows) text += line(row);
  if (file.write(text.toUtf8()) < 0)
    throw IoError("cannot write the CSV file: " + file.errorString().toStdString(), {path.toStdString(), {}, {}});
}

CsvTable csvOf(const QAbstractItemModel& model) {
  CsvTable table;
  for (int c = 0; c < model.columnCount(); ++c) table.header << model.headerData(c, Qt::Horizontal).toString();
  for (int r = 0; r < model.rowCount(); ++r) {
    QStringList row;
    for (int c = 0; c < model.columnCount(); ++c) row << model.index(r, c).data().toString();
    table.rows.push_back(std::move(row));
  }
  return table;
}

void addExportMenu(QWidget* widget, const QString& baseName, std::function<CsvTable()> data) {
  widget->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(widget, &QWidget::customContextMenuRequested, widget, [widget, baseName, data](const QPoint& at) {
    QMenu menu(widget);
    // Each action reports its own failure: a full disk must not end the application.
    auto guarded = [widget](const std::function<void()>& save) {
      try {
        save();
      } catch (const Error& e) {
        dfi::logger("ui")->error("export failed: {}", e.what());
        QMessageBox::warning(widget, QObject::tr("Export failed"), QString::fromStdString(e.what()));
      }
    };
    menu.addAction(QObject::tr("Save Picture..."), widget, [widget, baseName, guarded] {
      const QString path = QFileDialog::getSaveFileName(widget, QObject::tr("Save Picture"), baseName + ".png",
                                                        exportFileFilter());
      if (path.isEmpty()) return;
      if (const auto options = askExportOptions(widget, path, widget)) guarded([&] { exportWidget(widget, path, *options); });
    });
    if (data) {
      menu.addAction(QObject::tr("Save Data as CSV..."), widget, [widget, baseName, data, guarded] {
        const QString path = QFileDialog::getSaveFileName(widget, QObject::tr("Save Data"), baseName + ".csv",
                                                          QObject::tr("CSV table (*.csv)"));
        if (!path.isEmpty()) guarded([&] { writeCsv(data(), path); });
      });
    }
    menu.exec(widget->mapToGlobal(at));
  });
}

}  // namespace dfi::ui
