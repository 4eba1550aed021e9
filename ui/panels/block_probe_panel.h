#pragma once
// What the attention and the statistics panels share: both show the probes (attention maps,
// hidden-state statistics) of the selected block, read lazily (a panel behind another tab
// reads its block when shown), and both can ask `dflash-eval serve`, through the context's
// inspect engine, to re-draft the block with every probe on ("Fetch from engine"), the answer
// being stored into the session.
// A subclass builds its widgets around headline(), the fetch button and the status line,
// implements loadSelection() and showAnswer(), and calls attach() at the end of its
// constructor (virtual calls do not reach it while the base is being constructed).

#include <optional>

#include <QWidget>

#include "session/session_viewer.h"
#include "models/block_probes.h"
#include "widgets/view_export.h"

class QLabel;
class QPushButton;

namespace dfi::ui {

struct InspectAnswer;

class BlockProbePanel : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  ~BlockProbePanel() override;

  QString headline() const;
  QString status() const;
  QPushButton* fetchButton() const { return fetch_; }
  const BlockProbes& probes() const { return probes_; }

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;

  QWidget* exportTarget() override { return this; }

 public slots:
  void fetchFromEngine();

 protected:
  BlockProbePanel(SessionContext* context, const QString& emptyHeadline, const QString& fetchToolTip,
                  QWidget* parent);
  void attach();  // registers with the context and reads the current selection

  // Reads selection_'s block into step_ and probes_ (both reset first) and redraws.
  virtual void loadSelection() = 0;
  // The engine answered an inspect request, for this block or another one.
  virtual void showAnswer(const InspectAnswer& answer) = 0;
  void showEvent(QShowEvent* event) override;
  // Clears step_ and probes_, then reads the selected step; false when none is selected.
  bool readSelectedStep();
  bool hasEngine() const;  // the context has an inspect engine to fetch from
  bool canFetch() const;

  SessionContext* context_;
  QLabel* headline_;
  QPushButton* fetch_;
  QLabel* status_;
  Selection selection_;
  std::optional<session::StepRecord> step_;
  BlockProbes probes_;

 private:
  // In a shown window but not shown itself (a tab behind another): reading can wait. A panel
  // never shown (headless render, tests) reads at once.
  bool behindAnotherTab() const { return window()->isVisible() && !isVisible(); }

  QString emptyHeadline_;
  bool stale_ = false;  // selection_ changed while hidden: read it when shown
};

}  // namespace dfi::ui
