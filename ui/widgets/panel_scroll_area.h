#pragma once
// The frame of a docked panel: the panel fills the dock, and scrolls inside it only when the
// dock is smaller than the panel's minimum size, so no panel forces the window past the
// screen. Unlike QScrollArea's widgetResizable, a panel with word-wrapped labels (height for
// width) is not grown to its preferred height.

#include <QScrollArea>

namespace dfi::ui {

class PanelScrollArea : public QScrollArea {
  Q_OBJECT
 public:
  explicit PanelScrollArea(QWidget* panel, QWidget* parent = nullptr);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fitPanel();
};

}  // namespace dfi::ui
