#include "widgets/token_strip.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QRegion>
#include <QPainter>
#include <QToolTip>

namespace dfi::ui {
namespace {

constexpr int kPadX = 3;
constexpr int kGap = 2;
constexpr int kBoundary = 5;  // extra room for the block bar

}  // namespace

TokenStrip::TokenStrip(QWidget* parent) : QWidget(parent) {
  QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

void TokenStrip::setChips(std::vector<Chip> chips) {
  chips_ = std::move(chips);
  measureChips();
  layoutChips(width(), &rects_);
  updateGeometry();
  update();
}

void TokenStrip::measureChips() {
  const QFontMetrics metrics(font());
  widths_.clear();
  widths_.reserve(chips_.size());
  for (const Chip& chip : chips_) widths_.push_back(metrics.horizontalAdvance(chip.text) + 2 * kPadX);
}

QRect TokenStrip::stepArea(int step) const {
  QRect area;
  for (std::size_t i = 0; i < chips_.size() && i < rects_.size(); ++i)
    if (step >= 0 && chips_[i].step == step) area |= rects_[i];
  return area;
}

// Only the outlines change: the old step's chips and the new one's are repainted.
void TokenStrip::setHighlightedStep(int step) {
  if (step == highlighted_) return;
  const QRect before = stepArea(highlighted_);
  highlighted_ = step;
  update(QRegion(before.adjusted(-2, -2, 2, 2)) + stepArea(step).adjusted(-2, -2, 2, 2));
}

void TokenStrip::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::FontChange) return;
  measureChips();
  layoutChips(width(), &rects_);
  updateGeometry();
}

int TokenStrip::layoutChips(int width, std::vector<QRect>* rects) const {
  const QFontMetrics metrics(font());
  const int lineHeight = metrics.height() + 4;
  rects->clear();
  int x = kGap, y = kGap;
  for (std::size_t i = 0; i < chips_.size() && i < widths_.size(); ++i) {
    const Chip& chip = chips_[i];
    const int w = widths_[i];
    const int lead = chip.startsBlock ? kBoundary : 0;
    if (x + lead + w > width - kGap && x > kGap) {
      x = kGap;
      y += lineHeight + kGap;
    }
    x += lead;
    rects->push_back(QRect(x, y, w, lineHeight));
    x += w + kGap;
  }
  return chips_.empty() ? 0 : y + lineHeight + kGap;
}

int TokenStrip::heightForWidth(int width) const {
  std::vector<QRect> rects;
  return layoutChips(width, &rects);
}

QSize TokenStrip::sizeHint() const { return {400, heightForWidth(400)}; }

QRect TokenStrip::chipRect(int chip) const {
  return chip >= 0 && chip < static_cast<int>(rects_.size()) ? rects_[static_cast<std::size_t>(chip)] : QRect();
}

int TokenStrip::chipAt(const QPoint& point) const {
  for (int i = 0; i < static_cast<int>(rects_.size()); ++i)
    if (rects_[static_cast<std::size_t>(i)].contains(point)) return i;
  return -1;
}

void TokenStrip::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  layoutChips(width(), &rects_);
}

void TokenStrip::paintEvent(QPaintEvent* event) {
  QPainter painter(this);
  painter.fillRect(event->rect(), palette().base());
  const QPen outline(palette().highlight().color(), 2);
  for (std::size_t i = 0; i < chips_.size() && i < rects_.size(); ++i) {
    const Chip& chip = chips_[i];
    const QRect r = rects_[i];
    // Drawing a chip's text shapes it, even where clipping hides it: a long response in a
    // scroll area has most chips outside the exposed part.
    if (!event->region().intersects(r.adjusted(-kBoundary, -2, 2, 2))) continue;
    painter.fillRect(r, chip.colour);
    if (chip.underline.isValid()) painter.fillRect(QRect(r.left(), r.bottom() - 2, r.width(), 3), chip.underline);
    if (chip.startsBlock) painter.fillRect(QRect(r.left() - kBoundary + 1, r.top(), 2, r.height()), Qt::darkGray);
    if (chip.step >= 0 && chip.step == highlighted_) {
      painter.setPen(outline);
      painter.drawRect(r.adjusted(0, 0, -1, -1));
    }
    painter.setPen(palette().text().color());
    painter.drawText(r, Qt::AlignCenter, chip.text);
  }
}

bool TokenStrip::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int chip = chipAt(help->pos());
    if (chip >= 0) {
      QToolTip::showText(help->globalPos(), chips_[static_cast<std::size_t>(chip)].toolTip, this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

void TokenStrip::mousePressEvent(QMouseEvent* event) {
  const int chip = chipAt(event->position().toPoint());
  if (chip >= 0 && chips_[static_cast<std::size_t>(chip)].step >= 0) emit stepClicked(chips_[static_cast<std::size_t>(chip)].step);
}

}  // namespace dfi::ui
