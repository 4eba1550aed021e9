#pragma once
// File > Open Recent: the last sessions opened, newest first, kept in QSettings.

#include <QMenu>

namespace dfi::ui {

class RecentFilesMenu : public QMenu {
  Q_OBJECT
 public:
  explicit RecentFilesMenu(QWidget* parent = nullptr);

  void add(const QString& path);  // moves it to the top
  QStringList files() const;

 signals:
  void fileChosen(const QString& path);

 private:
  void rebuild();
};

}  // namespace dfi::ui
