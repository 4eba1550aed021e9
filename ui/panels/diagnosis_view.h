#pragma once
// The Diagnosis panel: what `dflash-eval diagnose` found, read back from its runs by the
// analysis library (readDiagnoses). At the top the lint findings (checkpoint problems found
// before any compute), then the hypotheses ranked by the paired tau difference against the
// baseline with its 95% interval, a bar each on one shared axis; candidate causes (interval
// above zero) stand out, hypotheses not measured or not applicable stay listed, greyed, with
// their reason. Clicking a hypothesis opens the compare view on the baseline and its run, on
// the block that changed most; expanding it lists those blocks, and clicking one selects it in
// every panel (and asks for the panel that shows that kind of change: the mask for `mask:*`,
// the statistics for the taps). One diagnosis per drafter: a selector chooses which. Reading
// and bootstrap run on a worker thread, and only while the panel is on screen.

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <QMetaObject>
#include <QThreadPool>
#include <QWidget>

#include "session/session_viewer.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/analysis/diagnosis.h"
#include "widgets/view_export.h"

class QComboBox;
class QLabel;
class QModelIndex;
class QStackedWidget;
class QTreeView;
class QTreeWidget;

namespace dfi::ui {

class CompareView;
class DiagnosisModel;
class ReloadWhenShown;

class DiagnosisView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  // The panel that shows best what a hypothesis changes in a block.
  enum class Panel { Tokens, Mask, Statistics };
  static Panel panelFor(const std::string& hypothesis);
  // The mask variant a `mask:<variant>` hypothesis evaluates; nullopt for the others.
  static std::optional<analysis::MaskVariant> maskVariantOf(const std::string& hypothesis);

  explicit DiagnosisView(SessionContext* context, QWidget* parent = nullptr);
  ~DiagnosisView() override;

  // The compare view a hypothesis opens on (the main window's).
  void setCompareView(CompareView* view) { compareView_ = view; }

  void reload();
  bool isComputing() const { return computing_; }
  bool isStale() const;
  const std::vector<analysis::Diagnosis>& diagnoses() const;
  // The compare view's series (its tau table's row) of a run's teacher-forced steps; -1: none.
  int seriesOf(session::RunId run) const;

  QComboBox* selector() const { return selector_; }
  QTreeWidget* lintList() const { return lintList_; }
  QTreeView* hypothesisList() const { return hypotheses_; }
  DiagnosisModel* model() const { return model_; }
  // The empty state's words, empty while a diagnosis is shown.
  QString hint() const;
  QString summary() const;  // the baseline's tau and the verdict

  // What a click on a row does: a hypothesis opens the comparison, a block is selected.
  void activate(const QModelIndex& index);

  void onSessionOpened() override;
  void onSessionClosed() override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override { return this; }
  QString exportBaseName() const override { return QStringLiteral("diagnosis"); }
  CsvTable exportData() override;  // the hypotheses with their numbers

 signals:
  // A hypothesis was clicked: the compare view shows series a (A) against b (B); the better
  // of baseline and hypothesis is A, so its list of blocks where B fell behind holds the
  // blocks that changed most in the hypothesis's direction.
  void comparisonChosen(int a, int b);
  // A block was clicked and selected through the context; `panel` shows it best, with the
  // mask view diffing against `diffAgainst` when set.
  void blockChosen(dfi::ui::DiagnosisView::Panel panel, std::optional<dfi::analysis::MaskVariant> diffAgainst);
  void computed();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Result;
  void finish(quint64 generation, const std::shared_ptr<Result>& result);
  void showDiagnosis(int index);
  void fitBarColumn();
  void openComparison(const analysis::HypothesisResult& hypothesis);
  void selectInCompareView(session::StepId stepA, session::StepId stepB);

  SessionContext* context_;
  CompareView* compareView_ = nullptr;
  DiagnosisModel* model_;
  QStackedWidget* pages_;
  QLabel* hint_;
  QComboBox* selector_;
  QLabel* baseline_;  // its tau, beside the selector
  QLabel* summary_;   // candidate causes, and how many hypotheses were measured
  QLabel* lintTitle_;
  QTreeWidget* lintList_;
  QTreeView* hypotheses_;
  ReloadWhenShown* reloader_;  // reloads while on screen, every 2 s at most while steps arrive
  QMetaObject::Connection pendingBlock_;  // selects a block in the compare view once it is compared

  QThreadPool pool_;
  quint64 generation_ = 0;
  bool computing_ = false;
  std::shared_ptr<const Result> result_;
};

}  // namespace dfi::ui
