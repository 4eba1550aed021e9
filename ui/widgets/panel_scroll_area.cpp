#include "widgets/panel_scroll_area.h"

#include <QEvent>
#include <QStyle>

namespace dfi::ui {

PanelScrollArea::PanelScrollArea(QWidget* panel, QWidget* parent) : QScrollArea(parent) {
  setFrameShape(QFrame::NoFrame);
  setWidgetResizable(false);
  setWidget(panel);
  // Small enough for any screen; the panel's own minimum is kept by scrolling.
  setMinimumSize(160, 80);
  panel->installEventFilter(this);
}

void PanelScrollArea::resizeEvent(QResizeEvent* event) {
  QScrollArea::resizeEvent(event);
  fitPanel();
}

// The panel's minimum changes with its contents (a longer run name in a combo box).
bool PanelScrollArea::eventFilter(QObject* watched, QEvent* event) {
  if (watched == widget() && event->type() == QEvent::LayoutRequest) fitPanel();
  return QScrollArea::eventFilter(watched, event);
}

void PanelScrollArea::fitPanel() {
  QWidget* panel = widget();
  if (!panel) return;
  // The viewport without scroll bars, or less the bar of a direction that must scroll.
  const QSize minimum = panel->minimumSizeHint().expandedTo(panel->minimumSize());
  QSize room = maximumViewportSize();
  const int bar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this);
  if (minimum.width() > room.width()) room.rheight() -= bar;
  if (minimum.height() > room.height()) room.rwidth() -= bar;
  const QSize size = room.expandedTo(minimum);
  if (panel->size() != size) panel->resize(size);
}

}  // namespace dfi::ui
