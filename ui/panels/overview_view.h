#pragma once
// The first screen of an opened session, for someone who has not seen it before: what was
// evaluated (target, the run summary's rows with their tau and its 95% interval in the tau
// convention on screen: the rows `dflash-eval summary` prints, from the same code), on which
// prompt sets, and the largest paired differences between drafters and mask variants. Drafter
// names and differences are links: a drafter selects its run in the navigator, a difference
// opens the compare view on that pair. Reading and statistics run on a worker thread; a
// session's diagnoses are left to the Diagnosis panel.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QThreadPool>
#include <QWidget>

#include "session/session_viewer.h"
#include "dfi/session/records.h"
#include "models/tau_convention.h"
#include "widgets/view_export.h"

class QTextBrowser;
class QUrl;

namespace dfi::ui {

class ReloadWhenShown;

class OverviewView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit OverviewView(SessionContext* context, QWidget* parent = nullptr);
  ~OverviewView() override;

  QTextBrowser* browser() const { return browser_; }
  QString text() const;  // what the panel says, as plain text
  bool isComputing() const { return computing_; }
  // The links, by what they do: "run:<run id>", "pair:<run a>,<run b>".
  static QString runLink(session::RunId run);
  static QString pairLink(session::RunId a, session::RunId b);

  // Differences listed at most.
  static constexpr int kDifferencesShown = 5;

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;
  // Reads the session's summary again on a worker; computed() when done.
  void reload();

  QWidget* exportTarget() override;
  QString exportBaseName() const override { return QStringLiteral("overview"); }
  CsvTable exportData() override;  // the summary's rows

 signals:
  // A run name was clicked (the navigator is told through the context's selection).
  void runChosen(session::RunId run);
  // A difference was clicked: compare run a (A, the better) with run b (B).
  void pairChosen(session::RunId a, session::RunId b);
  void computed();

 private:
  struct Result;
  void finish(quint64 generation, const std::shared_ptr<Result>& result);
  void render();
  void follow(const QUrl& link);

  SessionContext* context_;
  QTextBrowser* browser_;
  ReloadWhenShown* reloader_;  // re-reads a followed file once it is quiet, when on screen
  QThreadPool pool_;
  quint64 generation_ = 0;
  bool computing_ = false;
  std::shared_ptr<const Result> result_;
};

}  // namespace dfi::ui
