#include "main_window.h"

#include <QApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

#include "dfi/base/version.h"

namespace dfi::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("DFlash Inspector"));
  setWindowIcon(QIcon(QStringLiteral(":/icons/dflash-inspector.svg")));
  resize(1280, 800);
  auto* placeholder = new QLabel(tr("Open a .dfi session (File > Open) to inspect a run."), this);
  placeholder->setAlignment(Qt::AlignCenter);
  setCentralWidget(placeholder);
  buildMenus();
  statusBar()->showMessage(tr("No session open"));
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About DFlash Inspector"), this, &MainWindow::showAbout);
}

void MainWindow::showAbout() {
  QMessageBox::about(this, tr("About DFlash Inspector"),
                     tr("<b>DFlash Inspector</b> %1 (git %2)<br>Qt %3<br>"
                        "Licensed under the GNU GPL v3 or later.")
                         .arg(QString::fromStdString(dfi::version()),
                              QString::fromStdString(dfi::gitHash()), qVersion()));
}

}  // namespace dfi::ui
