#pragma once
// The compare view's close-up of one block regression: run A's block and run B's block at the
// same prompt and anchor, side by side. Each side shows the block slot by slot (draft, target,
// verdict, as the token panel does) and a picture of what the drafter attended to: the
// attention it recorded (mean over the heads of its last layer) when the session holds it,
// otherwise the mask its run ran with. Two runs that differ only in their mask variant show
// the difference at a glance.

#include <QWidget>

#include "dfi/session/records.h"

class QLabel;
class QTableView;

namespace dfi::ui {

class HeatmapPlot;
class SessionContext;
class TokenTableModel;

class BlockPairView : public QWidget {
  Q_OBJECT
 public:
  explicit BlockPairView(SessionContext* context, QWidget* parent = nullptr);

  // Shows the two blocks (steps of the session); 0 for a side that has none.
  void showPair(session::StepId a, session::StepId b);
  void clear();

  // One side's parts, for tests: 0 is A, 1 is B.
  struct Side {
    QLabel* headline = nullptr;
    TokenTableModel* tokens = nullptr;
    QTableView* table = nullptr;
    QLabel* pictureCaption = nullptr;
    HeatmapPlot* picture = nullptr;
    session::StepId step = 0;
    bool showsAttention = false;  // else the run's mask
  };
  const Side& side(int i) const { return sides_[i]; }

 private:
  void showSide(Side& side, const QString& letter, session::StepId step);
  void drawMask(Side& side, const session::StepRecord& step, const session::RunRecord& run);

  SessionContext* context_;
  QLabel* hint_;
  Side sides_[2];
};

}  // namespace dfi::ui
