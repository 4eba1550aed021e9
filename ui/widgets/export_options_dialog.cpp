#include "widgets/export_options_dialog.h"

#include <algorithm>

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>

namespace dfi::ui {
namespace {

constexpr const char* kDpiKey = "export/dpi";

QSpinBox* spinBox(int low, int high, const QString& suffix) {
  auto* box = new QSpinBox;
  box->setRange(low, high);
  box->setSuffix(suffix);
  box->setAccelerated(true);
  return box;
}

}  // namespace

ExportOptionsDialog::ExportOptionsDialog(const QWidget* picture, QWidget* parent)
    : QDialog(parent),
      width_(spinBox(16, 20000, tr(" px"))),
      height_(spinBox(16, 20000, tr(" px"))),
      dpi_(spinBox(10, 2400, tr(" dpi"))),
      shownDpi_(96) {
  setWindowTitle(tr("Picture Size"));
  auto* form = new QFormLayout(this);
  form->addRow(tr("Width"), width_);
  form->addRow(tr("Height"), height_);
  form->addRow(tr("Resolution"), dpi_);
  auto* note = new QLabel(tr("The view is laid out as on a 96-dpi screen at size x 96 / resolution: a higher "
                             "resolution gives the same picture, sharper."));
  note->setWordWrap(true);
  form->addRow(note);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  form->addRow(buttons);
  const int dpi = std::clamp(QSettings().value(QLatin1String(kDpiKey), 96).toInt(), 10, 2400);
  setOptions({QSize(qRound(picture->width() * dpi / 96.0), qRound(picture->height() * dpi / 96.0)), double(dpi)});
  connect(dpi_, &QSpinBox::valueChanged, this, &ExportOptionsDialog::rescale);
}

ExportOptions ExportOptionsDialog::options() const {
  return {QSize(width_->value(), height_->value()), static_cast<double>(dpi_->value())};
}

void ExportOptionsDialog::setOptions(const ExportOptions& options) {
  const QSignalBlocker block(dpi_);
  width_->setValue(options.size.width());
  height_->setValue(options.size.height());
  dpi_->setValue(qRound(options.dpi));
  shownDpi_ = dpi_->value();
}

void ExportOptionsDialog::rescale(int dpi) {
  const double factor = static_cast<double>(dpi) / shownDpi_;
  width_->setValue(qRound(width_->value() * factor));
  height_->setValue(qRound(height_->value() * factor));
  shownDpi_ = dpi;
}

void ExportOptionsDialog::accept() {
  QSettings().setValue(QLatin1String(kDpiKey), dpi_->value());
  QDialog::accept();
}

std::optional<ExportOptions> askExportOptions(const QWidget* picture, const QString& path, QWidget* parent) {
  if (QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0) return ExportOptions{};
  ExportOptionsDialog dialog(picture, parent);
  if (dialog.exec() != QDialog::Accepted) return std::nullopt;
  return dialog.options();
}

}  // namespace dfi::ui
