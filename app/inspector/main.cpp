// dflash-inspector: the GUI's entry point. --version works without a display.
//   dflash-inspector [session.dfi]

#include <cstdio>
#include <cstring>

#include <QApplication>
#include <QCommandLineParser>

#include "dfi/base/error.h"
#include "dfi/base/version.h"
#include "windows/render.h"
#include "windows/main_window.h"

namespace {

constexpr const char* kUsage =
    "Usage: dflash-inspector [session.dfi]\n"
    "Inspect DFlash drafter sessions (.dfi files).\n\n"
    "  session.dfi   a session to open (followed live while the engine still writes it)\n"
    "  --render VIEWS --out DIR [--step ID] [--format png|svg|pdf|csv] [--size WxH] [--dpi N]\n"
    "                write views of one block (window, navigator, tokens, mask, mask-diff,\n"
    "                mask-training-diff, tree, compare, attention, statistics, diagnosis,\n"
    "                positions, overview; comma list) to DIR; csv: the overview's summary rows\n"
    "                without a display, and exit; --size: each picture's pixels, --dpi: its\n"
    "                resolution (the view is laid out at size x 96 / dpi)\n"
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
  // Rendering needs no display: use the offscreen platform unless one was chosen.
  bool render = false;
  for (int i = 1; i < argc; ++i) render = render || std::strcmp(argv[i], "--render") == 0;
  if (render && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");

  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("DFlash Inspector"));
  QApplication::setOrganizationName(QStringLiteral("dflash-inspector"));
  QApplication::setApplicationVersion(QString::fromStdString(dfi::version()));

  QCommandLineParser parser;
  parser.addPositionalArgument(QStringLiteral("session"), QStringLiteral("A .dfi session file to open."),
                               QStringLiteral("[session.dfi]"));
  const QCommandLineOption renderOption(QStringLiteral("render"), QStringLiteral("Views to render."), QStringLiteral("views"));
  const QCommandLineOption outOption(QStringLiteral("out"), QStringLiteral("Directory for rendered views."), QStringLiteral("dir"));
  const QCommandLineOption stepOption(QStringLiteral("step"), QStringLiteral("Step id to render."), QStringLiteral("id"));
  const QCommandLineOption formatOption(QStringLiteral("format"), QStringLiteral("png, svg or pdf."), QStringLiteral("format"),
                                        QStringLiteral("png"));
  const QCommandLineOption sizeOption(QStringLiteral("size"), QStringLiteral("Picture size WxH in pixels."), QStringLiteral("WxH"));
  const QCommandLineOption dpiOption(QStringLiteral("dpi"), QStringLiteral("Picture resolution."), QStringLiteral("dpi"),
                                     QStringLiteral("96"));
  parser.addOptions({renderOption, outOption, stepOption, formatOption, sizeOption, dpiOption});
  parser.process(app);

  if (parser.isSet(renderOption)) {
    if (parser.positionalArguments().size() != 1 || !parser.isSet(outOption)) {
      std::fputs("dflash-inspector: --render needs --out DIR and one session file\n", stderr);
      return 2;
    }
    dfi::ui::RenderRequest request{parser.positionalArguments().front(),
                                   parser.value(renderOption).split(',', Qt::SkipEmptyParts), std::nullopt,
                                   parser.value(outOption), parser.value(formatOption)};
    if (parser.isSet(stepOption)) request.step = parser.value(stepOption).toLongLong();
    try {
      if (parser.isSet(sizeOption)) request.picture.size = dfi::ui::parseExportSize(parser.value(sizeOption));
      bool ok = false;
      request.picture.dpi = parser.value(dpiOption).toDouble(&ok);
      if (!ok) throw dfi::UsageError("--dpi '" + parser.value(dpiOption).toStdString() + "': expected a number");
    } catch (const dfi::Error& e) {
      std::fprintf(stderr, "dflash-inspector: %s\n", e.what());
      return 2;
    }
    return dfi::ui::renderViews(request);
  }

  dfi::ui::MainWindow window;
  window.show();
  // Opened after show(), so a failure appears as a dialog over the window and in its log.
  if (!parser.positionalArguments().isEmpty()) window.openFile(parser.positionalArguments().front());
  return QApplication::exec();
}
