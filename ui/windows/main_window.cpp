#include "windows/main_window.h"

#include <algorithm>

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>

#include "session/file_session_source.h"
#include "engine/inspect_client.h"
#include "session/session_context.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/base/version.h"
#include "widgets/export_options_dialog.h"
#include "widgets/panel_scroll_area.h"
#include "widgets/recent_files_menu.h"
#include "widgets/view_export.h"
#include "panels/attention_view.h"
#include "panels/compare_view.h"
#include "panels/diagnosis_view.h"
#include "panels/position_view.h"
#include "panels/what_if_view.h"
#include "panels/log_dock.h"
#include "panels/mask_controls.h"
#include "panels/mask_view.h"
#include "panels/navigator.h"
#include "panels/overview_view.h"
#include "windows/run_dialog.h"
#include "panels/stats_view.h"
#include "panels/token_view.h"
#include "panels/tree_view.h"

namespace dfi::ui {
namespace {

// Bump when panels are added or renamed, so an old saved layout is not applied to new docks.
constexpr int kLayoutVersion = 9;

QStringList droppedSessions(const QMimeData* mime) {
  QStringList paths;
  for (const QUrl& url : mime->urls())
    if (url.isLocalFile() && url.toLocalFile().endsWith(QLatin1String(".dfi"), Qt::CaseInsensitive))
      paths << url.toLocalFile();
  return paths;
}

// Whether a panel is the one in front of its tab group: Qt keeps the docks behind it "visible",
// moved out of the window.
bool inFront(const QWidget* panel) { return panel->isVisible() && !panel->visibleRegion().isEmpty(); }

// Below this usable screen height (a 1280x720 or 1366x768 laptop) the analysis views are tabs
// beside the tokens instead of a row below them.
constexpr int kCompactScreenHeight = 900;

// The screen area a window of ours may take: the one it is on, less task bars and docks.
QRect availableArea(const QWidget* window) {
  const QScreen* screen = window->screen() ? window->screen() : QGuiApplication::primaryScreen();
  return screen ? screen->availableGeometry() : QRect();
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      context_(new SessionContext(
          [](const QString& path) { return std::make_unique<FileSessionSource>(path.toStdString()); }, this)),
      logDock_(new LogDock(this)),
      maskView_(new MaskView(context_)),
      navigator_(new Navigator(context_)),
      tokenView_(new TokenView(context_)),
      treeView_(new TreeView(context_)),
      compareView_(new CompareView(context_)),
      positionView_(new PositionView(context_)),
      whatIfView_(new WhatIfView(context_)),
      overviewView_(new OverviewView(context_)),
      diagnosisView_(new DiagnosisView(context_)),
      inspectClient_(new InspectClient(this)),
      attentionView_(new AttentionView(context_)),
      statsView_(new StatsView(context_)) {
  context_->setInspectClient(inspectClient_);  // the attention and statistics panels fetch blocks with it
  setWindowTitle(tr("DFlash Inspector"));
  setWindowIcon(QIcon(QStringLiteral(":/icons/dflash-inspector.svg")));
  setAcceptDrops(true);
  setDockNestingEnabled(true);

  // Default layout: the navigator on the left above the log, the block's tokens above its
  // mask on the right (the tree in a tab behind the mask, the run comparison behind the
  // tokens). The log is not along the bottom: a bottom dock area takes every pixel the window
  // grows by when there is no central widget.
  QDockWidget* navigator = addPanel(navigator_, tr("Navigator"), QStringLiteral("NavigatorDock"), Qt::LeftDockWidgetArea);
  QDockWidget* tokens = addPanel(tokenView_, tr("Tokens"), QStringLiteral("TokenDock"), Qt::RightDockWidgetArea);
  QDockWidget* mask = addPanel(maskView_, tr("Attention mask"), QStringLiteral("MaskDock"), Qt::RightDockWidgetArea);
  splitDockWidget(tokens, mask, Qt::Vertical);
  QDockWidget* tree = addPanel(treeView_, tr("Tree"), QStringLiteral("TreeDock"), Qt::RightDockWidgetArea);
  tabifyDockWidget(mask, tree);
  // Attention and hidden-state statistics of the block, in tabs behind the mask too.
  tabifyDockWidget(mask, addPanel(attentionView_, tr("Attention"), QStringLiteral("AttentionDock"), Qt::RightDockWidgetArea));
  tabifyDockWidget(mask, addPanel(statsView_, tr("Statistics"), QStringLiteral("StatsDock"), Qt::RightDockWidgetArea));
  mask->raise();
  QDockWidget* compare = addPanel(compareView_, tr("Compare runs"), QStringLiteral("CompareDock"), Qt::RightDockWidgetArea);
  tabifyDockWidget(tokens, compare);
  // What `dflash-eval diagnose` found, behind the tokens too; it opens the comparison.
  tabifyDockWidget(tokens, addPanel(diagnosisView_, tr("Diagnosis"), QStringLiteral("DiagnosisDock"), Qt::RightDockWidgetArea));
  diagnosisView_->setCompareView(compareView_);
  // Acceptance per draft slot, by anchor position and the drafter's calibration, beside it.
  tabifyDockWidget(tokens, addPanel(positionView_, tr("Positions"), QStringLiteral("PositionsDock"), Qt::RightDockWidgetArea));
  // Other verify lengths and tree budgets from a teacher-forced run, with their speedup.
  tabifyDockWidget(tokens, addPanel(whatIfView_, tr("What-if"), QStringLiteral("WhatIfDock"), Qt::RightDockWidgetArea));
  // The session's overview, the first thing shown when one opens, in a tab before the tokens.
  QDockWidget* overview = addPanel(overviewView_, tr("Overview"), QStringLiteral("OverviewDock"), Qt::RightDockWidgetArea);
  tabifyDockWidget(tokens, overview);
  overview->raise();
  addDockWidget(Qt::LeftDockWidgetArea, logDock_);
  splitDockWidget(navigator, logDock_, Qt::Vertical);
  logDock_->installEventFilter(this);
  navigator->installEventFilter(this);
  if (QSettings().value(QStringLiteral("view/tau_convention")).toString() == tauConventionName(TauConvention::Vllm))
    context_->setTauConvention(TauConvention::Vllm);
  buildMenus();
  restoreGeometry(QSettings().value(QStringLiteral("window/geometry")).toByteArray());
  fitToScreen();

  connect(context_, &SessionContext::errorOccurred, this, &MainWindow::showError);
  // A diagnosis's session opens on the diagnosis: it is what its runs were recorded for.
  connect(context_, &SessionContext::sessionOpened, this, [this] {
    const auto runs = context_->runs();
    const bool diagnosed = std::ranges::any_of(runs, [](const session::RunRecord& r) { return r.hypothesis == "baseline"; });
    dock(diagnosed ? "DiagnosisDock" : "OverviewDock")->raise();
  });
  // A step chosen while the overview is in front: its tokens are what the user asked to see.
  connect(context_, &SessionContext::selectionChanged, this, [this](const Selection& selection) {
    if (selection.step && inFront(overviewView_)) dock("TokenDock")->raise();
  });
  connect(overviewView_, &OverviewView::pairChosen, this, [this](session::RunId a, session::RunId b) {
    QDockWidget* compare = dock("CompareDock");
    compare->show();
    compare->raise();
    compareView_->requestRuns(a, b);
  });
  connect(diagnosisView_, &DiagnosisView::comparisonChosen, this, [this] {
    dock("CompareDock")->show();
    dock("CompareDock")->raise();
  });
  connect(diagnosisView_, &DiagnosisView::blockChosen, this,
          [this](DiagnosisView::Panel panel, std::optional<analysis::MaskVariant> diffAgainst) {
            const char* name = panel == DiagnosisView::Panel::Mask         ? "MaskDock"
                               : panel == DiagnosisView::Panel::Statistics ? "StatsDock"
                                                                           : "TokenDock";
            if (panel == DiagnosisView::Panel::Mask) maskView_->controls()->setDiffAgainst(diffAgainst);
            dock(name)->show();
            dock(name)->raise();
          });
  connect(context_, &SessionContext::sessionOpened, this, &MainWindow::updateTitle);
  connect(context_, &SessionContext::sessionClosed, this, &MainWindow::updateTitle);
  connect(context_, &SessionContext::stepsAppended, this,
          [this](int count) { statusBar()->showMessage(tr("%n new step(s)", nullptr, count), 3000); });
  connect(qApp, &QApplication::focusChanged, this, [this](QWidget*, QWidget* now) {
    for (QWidget* w = now; w; w = w->parentWidget())
      if (dynamic_cast<ExportableView*>(w)) {
        lastFocusedPanel_ = w;
        return;
      }
  });
  updateTitle();
}

MainWindow::~MainWindow() {
  // The panels unregister from the context as they die, so they go first: left to QObject,
  // the context (created first) would be deleted before them.
  qDeleteAll(findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly));
}

QDockWidget* MainWindow::addPanel(QWidget* panel, const QString& title, const QString& objectName,
                                  Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(objectName);
  auto* scroll = new PanelScrollArea(panel);
  scroll->setObjectName(objectName + QStringLiteral("Scroll"));
  dock->setWidget(scroll);
  addDockWidget(area, dock);
  // A panel brought to the front (its tab chosen, or raised by a link) is the current view
  // for File > Export, as a panel that takes the focus is.
  if (dynamic_cast<ExportableView*>(panel))
    connect(dock, &QDockWidget::visibilityChanged, this, [this, dock, panel](bool visible) {
      if (visible && shown_ && !tabifiedDockWidgets(dock).isEmpty()) lastFocusedPanel_ = panel;
    });
  return dock;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open Session..."), QKeySequence::Open, this, &MainWindow::chooseAndOpen);
  recent_ = new RecentFilesMenu(this);
  connect(recent_, &RecentFilesMenu::fileChosen, this, &MainWindow::openFile);
  file->addMenu(recent_);
  file->addAction(tr("&Close Session"), QKeySequence::Close, context_, &SessionContext::close);
  file->addAction(tr("&Run Evaluation..."), QKeySequence(tr("Ctrl+R")), this, &MainWindow::showRunDialog);
  file->addAction(tr("&Diagnose..."), QKeySequence(tr("Ctrl+Shift+D")), this, &MainWindow::showDiagnoseDialog);
  QAction* follow = file->addAction(tr("&Follow a File Being Written"));
  follow->setCheckable(true);
  follow->setChecked(context_->isFollowing());
  connect(follow, &QAction::toggled, context_, &SessionContext::setFollowing);
  file->addSeparator();
  file->addAction(tr("&Export Current View..."), QKeySequence(tr("Ctrl+E")), this, &MainWindow::chooseAndExport);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  viewMenu_ = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* dock : findChildren<QDockWidget*>()) viewMenu_->addAction(dock->toggleViewAction());
  viewMenu_->addSeparator();
  // One tau convention on screen; each header that shows a tau names it.
  QMenu* tau = viewMenu_->addMenu(tr("&Tau Convention"));
  auto* conventions = new QActionGroup(tau);
  for (TauConvention convention : {TauConvention::Reference, TauConvention::Vllm}) {
    QAction* action = tau->addAction(tauConventionName(convention));
    action->setObjectName(QStringLiteral("tau-") + tauConventionName(convention));
    action->setToolTip(tauConventionExplanation(convention));
    action->setCheckable(true);
    action->setChecked(convention == context_->tauConvention());
    conventions->addAction(action);
    connect(action, &QAction::triggered, this, [this, convention] {
      context_->setTauConvention(convention);
      QSettings().setValue(QStringLiteral("view/tau_convention"), tauConventionName(convention));
    });
  }
  tau->setToolTipsVisible(true);
  viewMenu_->addSeparator();
  viewMenu_->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);

  // Block to block from any panel: the navigator's order, every panel following the selection.
  QMenu* go = menuBar()->addMenu(tr("&Go"));
  const auto goTo = [this](int direction, bool garbled) {
    return [this, direction, garbled] {
      if (!navigator_->selectNeighbour(direction, garbled))
        statusBar()->showMessage(garbled ? tr("No garbled block %1").arg(direction > 0 ? tr("after this one") : tr("before this one"))
                                         : tr("No block %1").arg(direction > 0 ? tr("after this one") : tr("before this one")),
                                 3000);
    };
  };
  go->addAction(tr("&Next Block"), QKeySequence(tr("Ctrl+.")), this, goTo(1, false));
  go->addAction(tr("&Previous Block"), QKeySequence(tr("Ctrl+,")), this, goTo(-1, false));
  go->addAction(tr("Next &Garbled Block"), QKeySequence(tr("Ctrl+G")), this, goTo(1, true));
  go->addAction(tr("Previous G&arbled Block"), QKeySequence(tr("Ctrl+Shift+G")), this, goTo(-1, true));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
  help->addAction(tr("&About DFlash Inspector"), this, &MainWindow::showAbout);
}

RunDialog* MainWindow::makeEngineDialog(bool diagnosis) {
  auto* dialog = new RunDialog(this, diagnosis ? RunDialog::Kind::Diagnosis : RunDialog::Kind::Evaluation);
  // The engine's records land in a local session: open it and follow it as it grows; a
  // diagnosis's on the Diagnosis panel, which fills in as its hypotheses are measured.
  connect(dialog, &RunDialog::sessionStarted, this, [this, dialog, diagnosis](const QString& path) {
    inspectClient_->setLaunch(dialog->launch());  // blocks are inspected by the engine that ran
    context_->setFollowing(true);
    if (openFile(path) && diagnosis) {
      QDockWidget* panel = dock("DiagnosisDock");
      panel->show();
      panel->raise();
    }
  });
  connect(dialog, &RunDialog::engineFailed, this, [this, diagnosis](const QString& message) {
    showError(diagnosis ? tr("The diagnosis failed") : tr("The evaluation failed"), message);
  });
  return dialog;
}

RunDialog* MainWindow::runDialog() {
  if (!runDialog_) runDialog_ = makeEngineDialog(false);
  return runDialog_;
}

RunDialog* MainWindow::diagnoseDialog() {
  if (!diagnoseDialog_) diagnoseDialog_ = makeEngineDialog(true);
  return diagnoseDialog_;
}

void MainWindow::showRunDialog() {
  runDialog()->show();
  runDialog()->raise();
}

void MainWindow::showDiagnoseDialog() {
  diagnoseDialog()->show();
  diagnoseDialog()->raise();
}

bool MainWindow::openFile(const QString& path) {
  if (!context_->open(path)) return false;
  recent_->add(path);
  return true;
}

void MainWindow::resetLayout() {
  for (QDockWidget* dock : findChildren<QDockWidget*>()) dock->setFloating(false);
  restoreState(defaultLayout_, kLayoutVersion);
}

void MainWindow::fitToScreen() {
  const QRect area = availableArea(this);
  if (area.isEmpty()) return;
  // The window manager's frame is outside geometry() and unknown before the first show: leave
  // a title bar and a border for it then.
  const QSize known = frameGeometry().size() - size();
  const QSize frame(std::max(known.width(), 8),
                    std::max(known.height(), style()->pixelMetric(QStyle::PM_TitleBarHeight, nullptr, this) + 8));
  const QSize wanted = testAttribute(Qt::WA_Resized) ? size() : QSize(1400, 900);
  resize(wanted.boundedTo(area.size() - frame));
  // pos() and move() are the frame's.
  move(std::clamp(x(), area.left(), std::max(area.left(), area.right() + 1 - width() - frame.width())),
       std::clamp(y(), area.top(), std::max(area.top(), area.bottom() + 1 - height() - frame.height())));
}

void MainWindow::exportCurrentView(const QString& path, const ExportOptions& options) {
  QWidget* panel = currentPanel();
  auto* view = dynamic_cast<ExportableView*>(panel);
  if (QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0) {
    const CsvTable data = view->exportData();
    if (data.isEmpty())
      throw UsageError("the " + view->exportBaseName().toStdString() + " view has no table of numbers to save as CSV");
    writeCsv(data, path);
  } else {
    exportWidget(view->exportTarget(), path, options);
  }
  dfi::logger("ui")->info("exported {}", path.toStdString());
}

void MainWindow::chooseAndOpen() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Session"), QString(),
                                                    tr("DFlash sessions (*.dfi);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

// The view File > Export saves: the panel last focused or brought to the front; before either,
// the one in front beside the navigator (the overview, on opening a session).
QWidget* MainWindow::currentPanel() const {
  if (lastFocusedPanel_) return lastFocusedPanel_.data();
  if (QDockWidget* front = panelBesideNavigator())
    if (auto* scroll = qobject_cast<QScrollArea*>(front->widget()); scroll && dynamic_cast<ExportableView*>(scroll->widget()))
      return scroll->widget();
  return maskView_;
}

void MainWindow::chooseAndExport() {
  QWidget* panel = currentPanel();
  const QString name = dynamic_cast<ExportableView*>(panel)->exportBaseName() + QStringLiteral(".png");
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export View"), name, exportFileFilter() + tr(";;CSV table (*.csv)"));
  if (path.isEmpty()) return;
  const auto options = askExportOptions(dynamic_cast<ExportableView*>(panel)->exportTarget(), path, this);
  if (!options) return;
  try {
    exportCurrentView(path, *options);
  } catch (const dfi::Error& e) {
    dfi::logger("ui")->error("export failed: {}", e.what());
    showError(tr("Export failed"), QString::fromStdString(e.what()));
  }
}

// Non-modal, so a burst of errors (or a test) is never blocked on a dialog; each is also in
// the log dock, written by whoever reported it.
// Every menu shortcut, as the menus name them: one list to learn the keys from.
void MainWindow::showShortcuts() {
  QString rows;
  for (QAction* menu : menuBar()->actions())
    for (QAction* action : menu->menu() ? menu->menu()->actions() : QList<QAction*>{})
      if (!action->shortcut().isEmpty())
        rows += QStringLiteral("<tr><td>%1</td><td>%2 &gt; %3</td></tr>")
                    .arg(action->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                         menu->text().remove(QLatin1Char('&')).toHtmlEscaped(),
                         action->text().remove(QLatin1Char('&')).toHtmlEscaped());
  auto* box = new QMessageBox(QMessageBox::NoIcon, tr("Keyboard Shortcuts"),
                              tr("<table cellpadding=3>%1</table><p>In the navigator: Ctrl+F searches the "
                                 "blocks' tokens.</p>").arg(rows),
                              QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("shortcutsBox"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::showError(const QString& title, const QString& message) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  statusBar()->showMessage(title, 5000);
}

void MainWindow::updateTitle() {
  if (context_->isOpen()) {
    setWindowTitle(tr("%1 - DFlash Inspector").arg(QFileInfo(context_->path()).fileName()));
    statusBar()->showMessage(context_->path());
  } else {
    setWindowTitle(tr("DFlash Inspector"));
    statusBar()->showMessage(tr("No session open: the mask view works as an explainer"));
  }
}

// The default proportions are set once the window has its size on screen (before, the dock
// areas are sized from their contents' hints), then the saved layout, if any, replaces them.
void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (shown_) return;
  shown_ = true;
  // Queued: the dock areas are fitted to the window after this event.
  QMetaObject::invokeMethod(this, &MainWindow::applyDefaultLayout, Qt::QueuedConnection);
}

void MainWindow::applyDefaultLayout() {
  // A laptop-sized screen cannot show a block's 16 slots above its mask: there the mask, tree,
  // attention and statistics join the tokens' tab group, each taking the right column's whole
  // height, one at a time.
  const bool compact = availableArea(this).height() < kCompactScreenHeight;
  if (compact) {
    for (const char* name : {"MaskDock", "TreeDock", "AttentionDock", "StatsDock"})
      tabifyDockWidget(dock("TokenDock"), dock(name));
    dock("OverviewDock")->raise();  // still the first thing shown
  }
  // A third of the width for the navigator (the right area is given the rest: two dock areas
  // without a central widget otherwise split the window evenly), a few lines of log, and three
  // fifths of the height for the tokens' tab group: its panels are rows of text (a block's 16
  // slots, the A | B blocks of a comparison, the hypotheses), the plots below read in less.
  QDockWidget* navigator = dock("NavigatorDock");
  navigatorWidth_ = width() / 3;
  QDockWidget* panel = panelBesideNavigator() ? panelBesideNavigator() : dock("TokenDock");
  resizeDocks({navigator, panel}, {navigatorWidth_, width() - navigatorWidth_}, Qt::Horizontal);
  resizeDocks({navigator, logDock_}, {height() - logHeight_, logHeight_}, Qt::Vertical);
  if (!compact) resizeDocks({panel, dock("MaskDock")}, {height() * 3 / 5, height() * 2 / 5}, Qt::Vertical);
  defaultLayout_ = saveState(kLayoutVersion);
  if (const QByteArray saved = QSettings().value(QStringLiteral("window/layout")).toByteArray(); !saved.isEmpty())
    restoreState(saved, kLayoutVersion);
}

QDockWidget* MainWindow::dock(const char* objectName) const {
  return findChild<QDockWidget*>(QLatin1String(objectName), Qt::FindDirectChildrenOnly);
}

// The log keeps the height and the navigator the width they were given (by the default
// layout or by dragging an edge): when the window is resized, the panels take the difference.
bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize && !defaultLayout_.isEmpty() && size() == laidOutSize_) {
    if (watched == logDock_ && logBelowNavigator()) logHeight_ = logDock_->height();
    if (watched == dock("NavigatorDock") && navigatorBesidePanels()) navigatorWidth_ = dock("NavigatorDock")->width();
  }
  return QMainWindow::eventFilter(watched, event);
}

// The tokens' dock, or the one in front of it in their tab group (the overview, the comparison,
// the diagnosis).
QDockWidget* MainWindow::panelBesideNavigator() const {
  for (const char* name : {"TokenDock", "OverviewDock", "CompareDock", "DiagnosisDock", "PositionsDock"})
    if (QDockWidget* d = dock(name); inFront(d) && !d->isFloating() && dockWidgetArea(d) == Qt::RightDockWidgetArea)
      return d;
  return nullptr;
}

bool MainWindow::navigatorBesidePanels() const {
  QDockWidget* navigator = dock("NavigatorDock");
  return navigator->isVisible() && !navigator->isFloating() && dockWidgetArea(navigator) == Qt::LeftDockWidgetArea &&
         panelBesideNavigator();
}

bool MainWindow::logBelowNavigator() const {
  QDockWidget* navigator = dock("NavigatorDock");
  return logDock_->isVisible() && navigator->isVisible() && !logDock_->isFloating() && !navigator->isFloating() &&
         dockWidgetArea(logDock_) == dockWidgetArea(navigator) && logDock_->x() == navigator->x() &&
         logDock_->y() > navigator->y();
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  laidOutSize_ = size();
  if (defaultLayout_.isEmpty()) return;
  QDockWidget* navigator = dock("NavigatorDock");
  if (logBelowNavigator()) {
    const int column = navigator->height() + logDock_->height();
    if (column > logHeight_) resizeDocks({navigator, logDock_}, {column - logHeight_, logHeight_}, Qt::Vertical);
  }
  // Two dock areas without a central widget share extra width evenly: the navigator would
  // take half of a wide screen.
  if (navigatorBesidePanels()) {
    QDockWidget* panel = panelBesideNavigator();
    const int row = navigator->width() + panel->width();
    const int width = std::min(navigatorWidth_, row / 2);
    if (width > 0) resizeDocks({navigator, panel}, {width, row - width}, Qt::Horizontal);
  }
}

// A run recording when the window closes: the user is asked, and the run is stopped as Cancel
// stops it, so what it recorded stays in the session and the engine's end is no crash.
bool MainWindow::stopRunsBeforeClosing() {
  QList<RunDialog*> running;
  for (RunDialog* dialog : {runDialog_, diagnoseDialog_})
    if (dialog && dialog->client()->running()) running << dialog;
  if (running.isEmpty()) return true;
  QMessageBox box(QMessageBox::Question, tr("A run is in progress"),
                  tr("The engine is still recording into %1. Stop it and quit?")
                      .arg(running.front()->sessionPath()),
                  QMessageBox::Cancel, this);
  box.setObjectName(QStringLiteral("quitDuringRunBox"));
  box.setInformativeText(tr("What it recorded so far stays in the session."));
  QPushButton* quit = box.addButton(tr("Stop and Quit"), QMessageBox::DestructiveRole);
  box.setDefaultButton(QMessageBox::Cancel);
  box.exec();
  if (box.clickedButton() != quit) return false;
  constexpr int kWaitForTheEngineMs = 10000;
  for (RunDialog* dialog : running) dialog->client()->stop(kWaitForTheEngineMs);
  return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!stopRunsBeforeClosing()) {
    event->ignore();
    return;
  }
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/layout"), saveState(kLayoutVersion));
  QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedSessions(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QStringList paths = droppedSessions(event->mimeData());
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  openFile(paths.front());  // one session at a time; comparison views come later
}

void MainWindow::showAbout() {
  QMessageBox::about(this, tr("About DFlash Inspector"),
                     tr("<b>DFlash Inspector</b> %1 (git %2)<br>Qt %3<br>"
                        "Licensed under the GNU GPL v3 or later.")
                         .arg(QString::fromStdString(dfi::version()),
                              QString::fromStdString(dfi::gitHash()), qVersion()));
}

}  // namespace dfi::ui
