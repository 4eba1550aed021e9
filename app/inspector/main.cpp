// dflash-inspector: the GUI's entry point. --version works without a display.
//   dflash-inspector [session.dfi]

#include <cstdio>
#include <cstring>

#include <QApplication>
#include <QCommandLineParser>

#include "dfi/base/version.h"
#include "windows/main_window.h"

namespace {

constexpr const char* kUsage =
    "Usage: dflash-inspector [session.dfi]\n"
    "Inspect DFlash drafter sessions (.dfi files).\n\n"
    "  session.dfi   a session to open (followed live while the engine still writes it)\n"
    "  --version     print the versions and exit\n"
    "  -h, --help    print this and exit\n";

}  // namespace

int main(int argc, char** argv) {
  // Answered before QApplication, so they work without a display.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
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

  QCommandLineParser parser;
  parser.addPositionalArgument(QStringLiteral("session"), QStringLiteral("A .dfi session file to open."),
                               QStringLiteral("[session.dfi]"));
  parser.process(app);

  dfi::ui::MainWindow window;
  window.show();
  // Opened after show(), so a failure appears as a dialog over the window and in its log.
  if (!parser.positionalArguments().isEmpty()) window.openFile(parser.positionalArguments().front());
  return QApplication::exec();
}
