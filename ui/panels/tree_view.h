#pragma once
// The tree panel: the DDTree of the selected block (TreeCanvas), either the tree the engine
// verified, when the run recorded one, or the tree rebuilt from the block's stored per-slot
// top-k at the budget the slider sets, so one sees how many more tokens a bigger tree would
// have had accepted.

#include <optional>

#include <QWidget>

#include "session/session_viewer.h"
#include "widgets/view_export.h"

class QCheckBox;
class QLabel;
class QSlider;
class QSpinBox;

namespace dfi::ui {

class TreeCanvas;

class TreeView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit TreeView(SessionContext* context, QWidget* parent = nullptr);
  ~TreeView() override;

  TreeCanvas* canvas() const { return canvas_; }
  QString headline() const;
  int budget() const;
  void setBudget(int budget);
  // Draws the recorded tree (when the block has one) instead of a rebuilt one.
  void setShowRecorded(bool recorded);

  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;

  QWidget* exportTarget() override;
  QString exportBaseName() const override { return QStringLiteral("tree"); }
  CsvTable exportData() override;  // one row per node

 private:
  void rebuild();

  SessionContext* context_;
  QLabel* headline_;
  QCheckBox* recorded_;
  QSlider* slider_;
  QSpinBox* budget_;
  TreeCanvas* canvas_;
  std::optional<session::StepRecord> step_;
  std::optional<session::TreeRecord> recordedTree_;
  int topK_ = 0;
  // The step's drafter has a Markov head (DSpark): each slot's distribution depends on the
  // branch above it, so a tree rebuilt from the step's per-slot top-k would not be its tree.
  bool markov_ = false;
};

}  // namespace dfi::ui
