#pragma once
// The inspector's main window: menus, dock area for the panels, status bar.

#include <QMainWindow>

namespace dfi::ui {

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

 private:
  void buildMenus();
  void showAbout();
};

}  // namespace dfi::ui
