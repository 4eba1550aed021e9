#pragma once
// The inspector's main window: every panel is a dock (layout saved with QSettings, "reset
// layout" restores the built-in one), sessions open from the menu, recent files, drag and
// drop and the command line, and a session being written is followed live.

#include <QMainWindow>
#include <QPointer>

#include "widgets/view_export.h"

class QDockWidget;

namespace dfi::ui {

class AttentionView;
class CompareView;
class DiagnosisView;
class PositionView;
class WhatIfView;
class InspectClient;
class StatsView;
class SessionContext;
class LogDock;
class MaskView;
class OverviewView;
class Navigator;
class TokenView;
class TreeView;
class RecentFilesMenu;
class RunDialog;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  SessionContext* context() const { return context_; }
  MaskView* maskView() const { return maskView_; }
  Navigator* navigator() const { return navigator_; }
  TokenView* tokenView() const { return tokenView_; }
  TreeView* treeView() const { return treeView_; }
  CompareView* compareView() const { return compareView_; }
  OverviewView* overviewView() const { return overviewView_; }
  DiagnosisView* diagnosisView() const { return diagnosisView_; }
  AttentionView* attentionView() const { return attentionView_; }
  StatsView* statsView() const { return statsView_; }
  InspectClient* inspectClient() const { return inspectClient_; }
  LogDock* logDock() const { return logDock_; }

  bool openFile(const QString& path);
  // File > Run Evaluation and File > Diagnose: created on first use.
  RunDialog* runDialog();
  RunDialog* diagnoseDialog();
  void showRunDialog();
  void showDiagnoseDialog();
  void resetLayout();
  // Shrinks the window to the screen it is on (a saved geometry may come from a larger one)
  // and moves it back onto that screen.
  void fitToScreen();
  // Saves the panel that had the focus last (the mask view when none had) to `path`: its
  // picture, or its numbers for a .csv path.
  void exportCurrentView(const QString& path, const ExportOptions& options = {});

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  QDockWidget* addPanel(QWidget* panel, const QString& title, const QString& objectName, Qt::DockWidgetArea area);
  void buildMenus();
  void applyDefaultLayout();
  QDockWidget* dock(const char* objectName) const;
  RunDialog* makeEngineDialog(bool diagnosis);  // File > Run Evaluation's or File > Diagnose's
  bool logBelowNavigator() const;      // in the default arrangement, where it keeps its height
  bool navigatorBesidePanels() const;  // likewise, where the navigator keeps its width
  QDockWidget* panelBesideNavigator() const;
  QWidget* currentPanel() const;  // what File > Export saves
  void showError(const QString& title, const QString& message);
  bool stopRunsBeforeClosing();  // false: the user chose to keep the window (and the run)
  void chooseAndOpen();
  void chooseAndExport();
  void updateTitle();
  void showAbout();
  void showShortcuts();

  SessionContext* context_;
  LogDock* logDock_;
  MaskView* maskView_;
  Navigator* navigator_;
  TokenView* tokenView_;
  TreeView* treeView_;
  CompareView* compareView_;
  PositionView* positionView_;
  WhatIfView* whatIfView_;
  OverviewView* overviewView_;
  DiagnosisView* diagnosisView_;
  InspectClient* inspectClient_;
  AttentionView* attentionView_;
  StatsView* statsView_;
  RecentFilesMenu* recent_ = nullptr;
  RunDialog* runDialog_ = nullptr;
  RunDialog* diagnoseDialog_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QByteArray defaultLayout_;
  QPointer<QWidget> lastFocusedPanel_;
  bool shown_ = false;
  int logHeight_ = 110;     // what the log dock keeps when the window is resized
  int navigatorWidth_ = 0;  // and the navigator
  QSize laidOutSize_;    // the window size the docks were last fitted to
};

}  // namespace dfi::ui
