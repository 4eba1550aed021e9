#pragma once
// Asked after "Save Picture" / File > Export chose a picture file: its size in pixels and its
// resolution. Starts at the panel's size on screen and the last resolution used; a new
// resolution scales the pixels with it, so the picture keeps its layout and only gets sharper.

#include <optional>

#include <QDialog>

#include "widgets/view_export.h"

class QSpinBox;

namespace dfi::ui {

class ExportOptionsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ExportOptionsDialog(const QWidget* picture, QWidget* parent = nullptr);

  ExportOptions options() const;
  void setOptions(const ExportOptions& options);
  QSpinBox* dpiBox() const { return dpi_; }

  // Accepted: remembers the resolution for next time.
  void accept() override;

 private:
  void rescale(int dpi);

  QSpinBox* width_;
  QSpinBox* height_;
  QSpinBox* dpi_;
  int shownDpi_;
};

// Asks for the options of a picture file (`path` a .png, .svg or .pdf); nullopt when cancelled.
// A .csv path needs none: {} without asking.
std::optional<ExportOptions> askExportOptions(const QWidget* picture, const QString& path, QWidget* parent);

}  // namespace dfi::ui
