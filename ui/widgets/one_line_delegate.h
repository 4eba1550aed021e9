#pragma once
// Paints one-line cells (tables whose rows are one line high) with each distinct text laid out
// once. QStyledItemDelegate shapes a cell's text three times per paint (for its size, its
// elision and its drawing) and again on every repaint: in the token table that was most of a
// new block's paint. Backgrounds, colours, fonts, alignment, selection and focus are the
// style's, as QStyledItemDelegate draws them; decorations and check boxes are not drawn (use
// it only for models without them).

#include <functional>

#include <QCache>
#include <QStaticText>
#include <QStyledItemDelegate>

namespace dfi::ui {

class OneLineDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  explicit OneLineDelegate(QObject* parent = nullptr);

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 protected:
  // Draws opt.text (elided to fit) in `room` with the painter's pen.
  void drawText(QPainter* painter, const QStyleOptionViewItem& opt, const QRect& room, Qt::Alignment alignment) const;

 private:
  const QStaticText& laidOut(const QString& text, const QFont& font) const;
  const QStaticText& elided(const QString& text, const QFont& font, Qt::TextElideMode mode, int width) const;
  const QStaticText& laidOut(const QString& text, const QFont& font, const QString& how,
                             const std::function<QString()>& shown) const;
  static int textMargin(const QStyleOptionViewItem& option);

  mutable QCache<QString, QStaticText> texts_;  // by font, elision and text
  mutable QFont keyedFont_;
  mutable QString fontKey_;
};

}  // namespace dfi::ui
