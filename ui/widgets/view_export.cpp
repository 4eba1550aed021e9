#include "widgets/view_export.h"

#include <QAbstractItemModel>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QWidget>
#include <qcustomplot.h>

#include "dfi/base/error.h"
#include "dfi/base/log.h"

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
      if (!path.isEmpty()) guarded([&] { exportWidget(widget, path); });
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
