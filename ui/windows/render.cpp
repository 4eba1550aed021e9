#include "windows/render.h"

#include <cstdio>
#include <functional>
#include <memory>

#include <QDir>
#include <QEventLoop>
#include <QTimer>
#include <QTreeView>

#include "session/session_context.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/base/error.h"
#include "models/diagnosis_model.h"
#include "widgets/view_export.h"
#include "panels/attention_view.h"
#include "panels/compare_view.h"
#include "panels/diagnosis_view.h"
#include "windows/main_window.h"
#include "panels/mask_controls.h"
#include "panels/mask_view.h"
#include "panels/navigator.h"
#include "panels/overview_view.h"
#include "panels/position_view.h"
#include "panels/stats_view.h"
#include "panels/token_view.h"
#include "panels/tree_view.h"

namespace dfi::ui {
namespace {

// Lets queued work finish (heatmap resampling and navigator summaries run on workers and
// deliver through the event loop) before a picture is taken.
void settle() {
  QEventLoop loop;
  QTimer::singleShot(1500, &loop, &QEventLoop::quit);
  loop.exec();
}

// The compare, diagnosis, positions and overview views compute on a worker: each is made only
// when the request names it, and its picture or table is taken once the numbers are in.
template <typename View>
std::unique_ptr<View> computedView(SessionContext* context, const RenderRequest& request, const QString& name,
                                   QSize size, const std::function<void(View&)>& prepare = {}) {
  if (!request.views.contains(name)) return nullptr;
  auto view = std::make_unique<View>(context);
  view->resize(size);
  view->show();
  if (prepare) prepare(*view);
  QEventLoop loop;
  QObject::connect(view.get(), &View::computed, &loop, &QEventLoop::quit);
  QTimer::singleShot(120000, &loop, &QEventLoop::quit);
  view->reload();
  if (view->isComputing()) loop.exec();  // without a second reader some are done already
  return view;
}

std::optional<Selection> chooseBlock(SessionContext& context, std::optional<qint64> step) {
  if (step) {
    const auto record = context.step(*step);
    if (!record) return std::nullopt;
    return Selection{record->runId, record->promptId, record->stepId};
  }
  for (const auto& run : context.runs()) {
    std::optional<Selection> first;
    context.forEachStepSummary(run.runId, [&](const session::StepSummary& s) {
      if (!first) first = Selection{s.runId, s.promptId, s.stepId};
    });
    if (first) return first;
  }
  return std::nullopt;
}

void prepareMask(MaskView& view, const QString& name) {
  MaskControls& c = *view.controls();
  c.setMaskLayout(name == QStringLiteral("mask-training-diff") ? MaskLayoutKind::Training : MaskLayoutKind::Inference);
  c.setVariant(analysis::MaskVariant::Reference);
  c.setDiffAgainst(name == QStringLiteral("mask") ? std::nullopt
                                                   : std::optional(analysis::MaskVariant::AnchorVisible));
}

// Mask and compare pictures come from views of their own at a readable size (the docked ones
// are as narrow as the window's layout makes them, or hidden behind a tab).
QWidget* targetOf(MainWindow& window, MaskView& standaloneMask, CompareView* standaloneCompare,
                  DiagnosisView* standaloneDiagnosis, PositionView* standalonePositions, AttentionView& attention,
                  StatsView& statistics,
                  const QString& name) {
  if (name == QStringLiteral("window")) return &window;
  if (name == QStringLiteral("positions")) return standalonePositions->exportTarget();
  if (name == QStringLiteral("attention")) return attention.exportTarget();
  if (name == QStringLiteral("statistics")) return statistics.exportTarget();
  if (name == QStringLiteral("navigator")) return window.navigator()->exportTarget();
  if (name == QStringLiteral("tokens")) return window.tokenView()->exportTarget();
  if (name == QStringLiteral("tree")) return window.treeView()->exportTarget();
  if (name == QStringLiteral("compare")) return standaloneCompare->exportTarget();
  if (name == QStringLiteral("diagnosis")) return standaloneDiagnosis->exportTarget();
  prepareMask(standaloneMask, name);
  return standaloneMask.exportTarget();
}

}  // namespace

QSize parseExportSize(const QString& text) {
  const QStringList parts = text.split(QLatin1Char('x'));
  bool okW = false, okH = false;
  const int width = parts.size() == 2 ? parts[0].toInt(&okW) : 0;
  const int height = parts.size() == 2 ? parts[1].toInt(&okH) : 0;
  if (!okW || !okH || width <= 0 || height <= 0)
    throw UsageError("--size '" + text.toStdString() + "': expected WIDTHxHEIGHT in pixels, e.g. 1600x1000");
  return {width, height};
}

QStringList renderableViews() {
  return {QStringLiteral("window"), QStringLiteral("navigator"), QStringLiteral("tokens"), QStringLiteral("mask"),
          QStringLiteral("mask-diff"), QStringLiteral("mask-training-diff"), QStringLiteral("tree"),
          QStringLiteral("compare"), QStringLiteral("attention"), QStringLiteral("statistics"),
          QStringLiteral("diagnosis"), QStringLiteral("positions"), QStringLiteral("overview")};
}

int renderViews(const RenderRequest& request) {
  for (const QString& view : request.views)
    if (!renderableViews().contains(view)) {
      std::fprintf(stderr, "dflash-inspector: unknown view '%s' (%s)\n", qPrintable(view),
                   qPrintable(renderableViews().join(QStringLiteral(", "))));
      return 2;
    }
  MainWindow window;
  window.resize(1600, 1000);
  window.show();
  QString openError;
  QObject::connect(window.context(), &SessionContext::errorOccurred,
                   [&](const QString&, const QString& message) { openError = message; });
  if (!window.openFile(request.session)) {
    std::fprintf(stderr, "dflash-inspector: %s\n", qPrintable(openError));
    return 4;
  }
  const auto block = chooseBlock(*window.context(), request.step);
  if (!block) {
    std::fprintf(stderr, "dflash-inspector: %s: %s\n", qPrintable(request.session),
                 request.step ? "no such step" : "the session has no steps");
    return 4;
  }
  window.context()->select(*block);
  // A render starts no engine: every panel shows what the session holds, none offers a fetch.
  window.context()->setInspectClient(nullptr);
  MaskView mask(window.context());
  mask.resize(1200, 640);
  mask.show();
  mask.onSessionOpened();
  mask.onSelectionChanged(*block);
  AttentionView attention(window.context());
  attention.resize(1400, 900);
  attention.show();
  attention.onSelectionChanged(*block);
  StatsView statistics(window.context());
  statistics.resize(1400, 900);
  statistics.show();
  statistics.onSelectionChanged(*block);
  const auto compare = computedView<CompareView>(window.context(), request, QStringLiteral("compare"), {1600, 1000});
  const auto diagnosis =
      computedView<DiagnosisView>(window.context(), request, QStringLiteral("diagnosis"), {1600, 1000});
  if (diagnosis) diagnosis->hypothesisList()->expand(diagnosis->model()->index(0, 0));  // the top hypothesis's blocks
  // The chosen block's run, as the docked panel follows the selection.
  const auto positions = computedView<PositionView>(window.context(), request, QStringLiteral("positions"), {1600, 560},
                                                    [&](PositionView& view) {
                                                      view.onSessionOpened();
                                                      view.onSelectionChanged(*block);
                                                    });
  const auto overview = computedView<OverviewView>(window.context(), request, QStringLiteral("overview"), {1400, 900});
  QDir().mkpath(request.outputDir);
  for (const QString& view : request.views) {
    const QString path = QDir(request.outputDir).filePath(view + "." + request.format);
    try {
      if (request.format == QStringLiteral("csv")) {  // the numbers behind the view
        auto* panel = view == QStringLiteral("overview") ? overview.get() : nullptr;
        if (!panel) throw UsageError("--format csv: only the overview is a table of numbers here, not " + view.toStdString());
        writeCsv(panel->exportData(), path);
      } else {
        QWidget* target = view == QStringLiteral("overview")
                              ? overview->exportTarget()
                              : targetOf(window, mask, compare.get(), diagnosis.get(), positions.get(), attention,
                                         statistics, view);
        settle();
        exportWidget(target, path, request.picture);
      }
    } catch (const Error& e) {
      std::fprintf(stderr, "dflash-inspector: %s\n", e.what());
      return e.exitCode();
    }
    std::printf("%s\n", qPrintable(path));
  }
  return 0;
}

}  // namespace dfi::ui
