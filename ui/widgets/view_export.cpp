#include "widgets/view_export.h"

#include <QFileInfo>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QWidget>
#include <qcustomplot.h>

#include "dfi/base/error.h"

namespace dfi::ui {
namespace {

void renderSvg(QWidget* widget, const QString& path) {
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(widget->size());
  svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
  svg.setTitle(widget->windowTitle());
  if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
    QCPPainter painter(&svg);
    plot->toPainter(&painter, widget->width(), widget->height());
  } else {
    QPainter painter(&svg);
    widget->render(&painter);
  }
}

void renderPdf(QWidget* widget, const QString& path) {
  if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
    if (!plot->savePdf(path)) throw IoError("cannot write the PDF", {path.toStdString(), {}, {}});
    return;
  }
  QPdfWriter pdf(path);
  pdf.setPageSize(QPageSize(QSizeF(widget->size()), QPageSize::Point));
  pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
  pdf.setResolution(72);  // one widget pixel per PDF point
  QPainter painter(&pdf);
  widget->render(&painter);
}

}  // namespace

void exportWidget(QWidget* widget, const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("png")) {
    auto* plot = qobject_cast<QCustomPlot*>(widget);
    const bool ok = plot ? plot->savePng(path) : widget->grab().save(path, "PNG");
    if (!ok) throw IoError("cannot write the PNG image", {path.toStdString(), {}, {}});
  } else if (suffix == QLatin1String("svg")) {
    renderSvg(widget, path);
  } else if (suffix == QLatin1String("pdf")) {
    renderPdf(widget, path);
  } else {
    throw UsageError("unknown export format '." + suffix.toStdString() + "' (use .png, .svg or .pdf)");
  }
  if (!QFileInfo(path).isFile() || QFileInfo(path).size() == 0)
    throw IoError("nothing was written", {path.toStdString(), {}, {}});
}

QString exportFileFilter() {
  return QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)");
}

}  // namespace dfi::ui
