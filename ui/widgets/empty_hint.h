#pragma once
// What an empty picture needs, said in words over it: a plot with no data would otherwise
// draw bare 0..5 axes, which tell a newcomer nothing. The hint covers the widget (which keeps
// its place and size in the layout) until it is cleared.

#include <QString>

class QWidget;

namespace dfi::ui {

// Shows `text` over `widget`; an empty text shows the widget again.
void setEmptyHint(QWidget* widget, const QString& text);
// The hint shown over `widget`, empty when none.
QString emptyHint(const QWidget* widget);

}  // namespace dfi::ui
