// The inspector's main window on a 200k-step session (generated once with the session Writer,
// cached in the build tree), offscreen:
//  - open to first paint: from constructing the window to the navigator's first paint with
//    the session's runs in it (<= 1 s). Reference: raw sqlite3 reading just the step columns
//    the navigator summarises.
//  - selecting another block: SessionContext::select until every panel has its new content
//    (the mask picture resampled) and the window has been painted again, median over 200
//    blocks, both the next block of the same response and a block of another prompt (<= 16 ms).
//    Reference: painting the window with nothing changed.
//  - filter and sort: ticking "acceptance below 2" in the navigator, then sorting the filtered
//    tree by acceptance, each until repainted, median of 5 (<= 100 ms each); likewise choosing
//    "garbled: any detector", and typing a prompt search (its part that runs at once: prompt
//    texts, runs, drafters). Reference: painting the window with nothing changed.
//  - token-text search: from asking until the worker's answer (every step's draft and target
//    text decoded) is shown (<= 5 s; the navigator stays responsive meanwhile). Reference: the
//    raw scan above.
//  - peak memory: VmHWM of the process at the end (<= 500 MB). Reference: the file size.
// Prints one JSON line per figure.

// Before any Qt header: it names a variable `slots`, which Qt defines as a macro.
#include "synthetic_session.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTreeView>

#include "bench_size.h"
#include "session/session_context.h"
#include "dfi/session/writer.h"
#include "models/navigator_filter.h"
#include "models/navigator_model.h"
#include "widgets/heatmap_plot.h"
#include "windows/main_window.h"
#include "panels/mask_view.h"
#include "panels/navigator.h"
#include "ui_timing.h"

using namespace dfi;
namespace fs = std::filesystem;

using dfi::bench::median;
using dfi::bench::ms;

namespace {

constexpr std::int32_t kRuns = 2;
const std::int32_t kPromptsPerRun = dfi::bench::sized(400, 2);
const std::int32_t kStepsPerPrompt = dfi::bench::sized(250, 50);  // 2 x 400 x 250 = 200k steps (smoke: 200)
const std::int64_t kSteps = std::int64_t{kRuns} * kPromptsPerRun * kStepsPerPrompt;
const int kSelections = dfi::bench::sized(200, 5), kRounds = dfi::bench::sized(5, 2);

void generate(const std::string& path) {
  std::fprintf(stderr, "bench_ui_session: generating %s (once)\n", path.c_str());
  const std::string partial = path + ".partial";
  {
    session::Writer writer(partial, {.mode = session::OpenMode::Overwrite});
    writer.addTokenStrings(session::synthetic::tokenStrings(4096));
    for (std::int32_t r = 0; r < kRuns; ++r) {
      const session::RunId run = writer.addRun(session::synthetic::run("drafter-" + std::to_string(r)));
      for (session::PromptId p = 0; p < kPromptsPerRun; ++p) {
        writer.addPrompt(session::synthetic::prompt(run, p));
        for (std::int32_t i = 0; i < kStepsPerPrompt; ++i) {
          session::StepRecord step = session::synthetic::step(run, p, i);
          step.maskVariant = "reference";
          const session::StepId id = writer.addStep(step);
          writer.addTree(session::synthetic::tree(id, 6));
        }
      }
    }
  }
  fs::rename(partial, path);
}

// The navigator's share of every step row, read with nothing else in the way.
double rawNavigatorScanMs(const std::string& path) {
  QElapsedTimer timer;
  timer.start();
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT step_id, run_id, prompt_id, step_index, anchor_position, accepted_count, garble_flags "
                     "FROM steps ORDER BY run_id, step_id",
                     -1, &stmt, nullptr);
  std::int64_t sum = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) sum += sqlite3_column_int64(stmt, 5) + sqlite3_column_bytes(stmt, 6);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  if (sum < 0) std::fprintf(stderr, "impossible\n");
  return ms(timer);
}

// Counts paints of a widget once `armed` is set.
class PaintWatch : public QObject {
 public:
  bool armed = false;
  int paints = 0;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (armed && event->type() == QEvent::Paint) ++paints;
    return QObject::eventFilter(watched, event);
  }
};

// Constructing the window and opening the file, until the navigator has painted its runs.
double openToFirstPaintMs(const QString& path) {
  QElapsedTimer timer;
  timer.start();
  ui::MainWindow window;
  window.resize(1600, 1000);
  window.show();
  PaintWatch watch;
  QTreeView* tree = window.navigator()->tree();
  tree->viewport()->installEventFilter(&watch);
  if (!window.openFile(path)) throw std::runtime_error("cannot open " + path.toStdString());
  QObject::connect(window.navigator()->model(), &ui::NavigatorModel::loaded, &watch, [&watch] { watch.armed = true; });
  while (!(watch.armed && watch.paints > 0 && tree->model()->rowCount() == kRuns)) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
  return ms(timer);
}

// Selects `block` and waits until the panels show it and the window has painted it.
double selectMs(ui::MainWindow& window, const ui::Selection& block) {
  ui::HeatmapPlot* heatmap = window.maskView()->plot();
  QElapsedTimer timer;
  timer.start();
  window.context()->select(block);
  while (heatmap->isResampling()) QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
  QCoreApplication::processEvents();  // posted events and the plots' queued replots (zero timers)
  window.repaint();
  return ms(timer);
}

// Filtering 200k steps (acceptance below 2: about a third of the steps) and then sorting the
// filtered tree by a column, each until the window has repainted: the GUI must not freeze on
// a header click while a filter is on.
std::pair<double, double> filterThenSortMs(ui::MainWindow& window) {
  QCheckBox* below = nullptr;
  for (QCheckBox* box : window.navigator()->findChildren<QCheckBox*>())
    if (box->text() == QLatin1String("acceptance below")) below = box;
  auto* value = window.navigator()->findChild<QDoubleSpinBox*>();
  value->setValue(2.0);
  QElapsedTimer timer;
  timer.start();
  below->setChecked(true);
  QCoreApplication::sendPostedEvents();
  window.repaint();
  const double filter = ms(timer);
  // A figure only if the filter did filter: some steps left, not all.
  const int shown = window.navigator()->filter()->shownStepCount();
  if (shown <= 0 || shown >= kSteps)
    throw std::runtime_error("the acceptance filter kept " + std::to_string(shown) + " of " + std::to_string(kSteps) +
                             " steps");
  timer.restart();
  window.navigator()->tree()->sortByColumn(ui::NavigatorModel::AcceptanceColumn, Qt::DescendingOrder);
  QCoreApplication::sendPostedEvents();
  window.repaint();
  const double sort = ms(timer);
  below->setChecked(false);
  window.navigator()->tree()->sortByColumn(ui::NavigatorModel::NameColumn, Qt::AscendingOrder);
  return {filter, sort};
}

// Choosing an item of one of the navigator's combo boxes, then clearing it, each until repainted.
double chooseMs(ui::MainWindow& window, QComboBox* box, const QString& item) {
  QElapsedTimer timer;
  timer.start();
  box->setCurrentIndex(box->findText(item));
  QCoreApplication::sendPostedEvents();
  window.repaint();
  const double chosen = ms(timer);
  box->setCurrentIndex(0);
  return chosen;
}

double searchMs(ui::MainWindow& window, const QString& text) {
  QElapsedTimer timer;
  timer.start();
  window.navigator()->searchField()->setText(text);
  QCoreApplication::sendPostedEvents();
  window.repaint();
  const double searched = ms(timer);
  window.navigator()->searchField()->clear();
  return searched;
}

// Until the token-text answer is in the tree.
double tokenSearchMs(ui::MainWindow& window, const QString& text) {
  QSignalSpy found(window.navigator()->model(), &ui::NavigatorModel::tokenTextMatches);
  QElapsedTimer timer;
  timer.start();
  window.navigator()->searchField()->setText(text);
  window.navigator()->searchTokenTextNow();
  found.wait(60000);
  QCoreApplication::sendPostedEvents();
  window.repaint();
  const double searched = ms(timer);
  window.navigator()->searchField()->clear();
  return searched;
}

double vmHwmMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

void printFigure(const char* figure, double value, const char* unit, double target, const char* reference,
                 double referenceValue) {
  std::printf(
      "{\"bench\":\"ui_session\",\"figure\":\"%s\",\"value\":%.3f,\"unit\":\"%s\",\"target_max\":%.1f,"
      "\"reference\":\"%s\",\"reference_value\":%.3f,\"ratio\":%.3f,\"steps\":%lld}\n",
      figure, value, unit, target, reference, referenceValue, referenceValue > 0 ? value / referenceValue : 0.0,
      static_cast<long long>(kSteps));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);  // no saved layout of the user's in the way

  const std::string dir = DFI_BENCH_DATA_DIR;
  fs::create_directories(dir);
  const std::string path = dir + dfi::bench::sized<std::string>("/ui_session_200k.dfi", "/ui_session_smoke.dfi");
  if (!fs::exists(path)) generate(path);
  const double fileMb = static_cast<double>(fs::file_size(path)) / 1e6;

  std::vector<double> opens, raw;
  for (int i = 0; i < kRounds; ++i) {
    opens.push_back(openToFirstPaintMs(QString::fromStdString(path)));
    raw.push_back(rawNavigatorScanMs(path));
  }
  printFigure("open_to_first_paint_ms", median(opens), "ms", 1000, "raw sqlite3 scan of the navigator's step columns",
              median(raw));

  ui::MainWindow window;
  window.resize(1600, 1000);
  window.show();
  window.openFile(QString::fromStdString(path));
  {
    QSignalSpy loaded(window.navigator()->model(), &ui::NavigatorModel::loaded);
    loaded.wait(60000);
  }
  // Step ids are written in order: run r, prompt p, step i has id 1 + (r * P + p) * S + i.
  auto blockAt = [](std::int32_t r, std::int32_t p, std::int32_t i) {
    return ui::Selection{r + 1, p, 1 + (std::int64_t{r} * kPromptsPerRun + p) * kStepsPerPrompt + i};
  };
  selectMs(window, blockAt(0, 0, 0));
  std::vector<double> next, other, idle;
  for (int i = 1; i <= kSelections; ++i) next.push_back(selectMs(window, blockAt(0, 0, i)));
  std::mt19937 random(11);
  for (int i = 0; i < kSelections; ++i) {
    const auto r = static_cast<std::int32_t>(random() % kRuns), p = static_cast<std::int32_t>(random() % kPromptsPerRun);
    other.push_back(selectMs(window, blockAt(r, p, static_cast<std::int32_t>(random() % kStepsPerPrompt))));
  }
  for (int i = 0; i < kSelections; ++i) idle.push_back(selectMs(window, window.context()->selection()));
  printFigure("select_next_block_median_ms", median(next), "ms", 16, "repaint with the selection unchanged",
              median(idle));
  printFigure("select_block_of_another_prompt_median_ms", median(other), "ms", 16,
              "repaint with the selection unchanged", median(idle));
  std::vector<double> filters, sorts;
  for (int i = 0; i < kRounds; ++i) {
    const auto [filter, sort] = filterThenSortMs(window);
    filters.push_back(filter);
    sorts.push_back(sort);
  }
  printFigure("filter_acceptance_below_median_ms", median(filters), "ms", 100, "repaint with the selection unchanged",
              median(idle));
  printFigure("sort_filtered_tree_median_ms", median(sorts), "ms", 100, "repaint with the selection unchanged",
              median(idle));
  std::vector<double> garbled, searches;
  for (int i = 0; i < kRounds; ++i) {
    garbled.push_back(chooseMs(window, window.navigator()->garbleChoice(), QStringLiteral("garbled: any detector")));
    searches.push_back(searchMs(window, QStringLiteral("Question 12")));
  }
  printFigure("filter_garbled_any_median_ms", median(garbled), "ms", 100, "repaint with the selection unchanged",
              median(idle));
  printFigure("search_prompts_and_runs_median_ms", median(searches), "ms", 100, "repaint with the selection unchanged",
              median(idle));
  printFigure("search_token_text_ms", tokenSearchMs(window, QStringLiteral("tok12")), "ms", 5000,
              "raw sqlite3 scan of the navigator's step columns", median(raw));
  printFigure("peak_memory_vmhwm_mb", vmHwmMb(), "MB", 500, "session file size (MB)", fileMb);
  return 0;
}
