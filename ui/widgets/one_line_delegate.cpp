#include "widgets/one_line_delegate.h"

#include <cmath>

#include <QApplication>
#include <QPainter>

namespace dfi::ui {

namespace {
constexpr int kCachedTexts = 4096;  // a few blocks' worth of cells
}

OneLineDelegate::OneLineDelegate(QObject* parent) : QStyledItemDelegate(parent), texts_(kCachedTexts) {}

const QStaticText& OneLineDelegate::laidOut(const QString& text, const QFont& font) const {
  return laidOut(text, font, QStringLiteral("full"), [&] { return text; });
}

// The text elided to `width`, found by the width: a long prompt is elided once per width, not
// on every paint.
const QStaticText& OneLineDelegate::elided(const QString& text, const QFont& font, Qt::TextElideMode mode,
                                           int width) const {
  return laidOut(text, font, QStringLiteral("%1 %2").arg(mode).arg(width),
                 [&] { return QFontMetrics(font).elidedText(text, mode, width); });
}

const QStaticText& OneLineDelegate::laidOut(const QString& text, const QFont& font, const QString& how,
                                            const std::function<QString()>& shown) const {
  if (font != keyedFont_) {  // QFont::key() builds a string: once per font, not per cell
    keyedFont_ = font;
    fontKey_ = font.key();
  }
  const QString key = fontKey_ + QChar(0) + how + QChar(0) + text;
  if (QStaticText* cached = texts_.object(key)) return *cached;
  auto* laid = new QStaticText(shown());
  laid->setTextFormat(Qt::PlainText);
  laid->setPerformanceHint(QStaticText::AggressiveCaching);
  laid->prepare(QTransform(), font);
  texts_.insert(key, laid);
  return *laid;
}

// The room the style leaves either side of an item's text.
int OneLineDelegate::textMargin(const QStyleOptionViewItem& option) {
  const QStyle* style = option.widget ? option.widget->style() : QApplication::style();
  return style->pixelMetric(QStyle::PM_FocusFrameHMargin, &option, option.widget) + 1;
}

void OneLineDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
  painter->save();
  style->drawPrimitive(QStyle::PE_PanelItemViewItem, &opt, painter, opt.widget);  // background, selection
  const int margin = textMargin(opt);
  const QPalette::ColorGroup group = !(opt.state & QStyle::State_Enabled) ? QPalette::Disabled
                                     : (opt.state & QStyle::State_Active) ? QPalette::Normal
                                                                           : QPalette::Inactive;
  painter->setPen(opt.palette.color(group, (opt.state & QStyle::State_Selected) ? QPalette::HighlightedText
                                                                                 : QPalette::Text));
  drawText(painter, opt, opt.rect.adjusted(margin, 0, -margin, 0), opt.displayAlignment);
  if (opt.state & QStyle::State_HasFocus) {
    QStyleOptionFocusRect focus;
    focus.QStyleOption::operator=(opt);
    focus.rect = style->subElementRect(QStyle::SE_ItemViewItemFocusRect, &opt, opt.widget);
    focus.state |= QStyle::State_KeyboardFocusChange | QStyle::State_Item;
    focus.backgroundColor = opt.palette.color(QPalette::Window);
    style->drawPrimitive(QStyle::PE_FrameFocusRect, &focus, painter, opt.widget);
  }
  painter->restore();
}

void OneLineDelegate::drawText(QPainter* painter, const QStyleOptionViewItem& opt, const QRect& room,
                               Qt::Alignment alignment) const {
  if (opt.text.isEmpty() || room.width() <= 0) return;
  const QStaticText* text = &laidOut(opt.text, opt.font);
  if (text->size().width() > room.width()) text = &elided(opt.text, opt.font, opt.textElideMode, room.width());
  const QSize size(static_cast<int>(std::ceil(text->size().width())), static_cast<int>(std::ceil(text->size().height())));
  painter->save();
  painter->setFont(opt.font);
  // Cut at the room's sides only: a room lower than a line (a bar's) still shows whole glyphs.
  painter->setClipRect(QRect(room.left(), opt.rect.top(), room.width(), opt.rect.height()), Qt::IntersectClip);
  painter->drawStaticText(QStyle::alignedRect(opt.direction, alignment, size, room).topLeft(), *text);
  painter->restore();
}

QSize OneLineDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  const QSizeF text = opt.text.isEmpty() ? QSizeF(0, QFontMetricsF(opt.font).height()) : laidOut(opt.text, opt.font).size();
  return {static_cast<int>(std::ceil(text.width())) + 2 * textMargin(opt), static_cast<int>(std::ceil(text.height()))};
}

}  // namespace dfi::ui
