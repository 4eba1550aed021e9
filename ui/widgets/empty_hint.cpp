#include "widgets/empty_hint.h"

#include <QEvent>
#include <QLabel>
#include <QWidget>

namespace dfi::ui {
namespace {

constexpr const char* kHintName = "emptyHint";

// Keeps the hint the size of the widget it covers.
class HintLabel : public QLabel {
 public:
  explicit HintLabel(QWidget* covered) : QLabel(covered) {
    setObjectName(QLatin1String(kHintName));
    setAlignment(Qt::AlignCenter);
    setWordWrap(true);
    setTextFormat(Qt::PlainText);
    setMargin(12);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
    setForegroundRole(QPalette::PlaceholderText);
    covered->installEventFilter(this);
    setGeometry(covered->rect());
  }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == parentWidget() && event->type() == QEvent::Resize) setGeometry(parentWidget()->rect());
    return QLabel::eventFilter(watched, event);
  }
};

}  // namespace

void setEmptyHint(QWidget* widget, const QString& text) {
  auto* hint = widget->findChild<QLabel*>(QLatin1String(kHintName), Qt::FindDirectChildrenOnly);
  if (text.isEmpty()) {
    if (hint) hint->hide();
    return;
  }
  if (!hint) hint = new HintLabel(widget);
  hint->setText(text);
  hint->raise();
  hint->show();
}

QString emptyHint(const QWidget* widget) {
  const auto* hint = widget->findChild<QLabel*>(QLatin1String(kHintName), Qt::FindDirectChildrenOnly);
  return hint && !hint->isHidden() ? hint->text() : QString();
}

}  // namespace dfi::ui
