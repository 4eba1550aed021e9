// dflash-inspector: the GUI's entry point. --version works without a display.

#include <cstdio>
#include <cstring>

#include <QApplication>

#include "dfi/base/version.h"
#include "windows/main_window.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("dflash-inspector %s (git %s)\nQt %s\nlibtorch: not linked (the GUI never "
                  "links it; see dflash-eval --version for the engine)\n",
                  dfi::version().c_str(), dfi::gitHash().c_str(), qVersion());
      return 0;
    }
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DFlash Inspector"));
  QApplication::setOrganizationName(QStringLiteral("dflash-inspector"));
  QApplication::setApplicationVersion(QString::fromStdString(dfi::version()));
  dfi::ui::MainWindow window;
  window.show();
  return QApplication::exec();
}
