#pragma once
// A whole response as flowing token chips: prompt tokens grey, the first sampled token blue,
// accepted drafts green, each step's bonus token orange, a bar before the tokens each step
// committed (the block boundaries), the selected step outlined, and an underline where the
// caller marks a token (the token view: a draft slot a garble detector flagged). Clicking a
// token asks for its step.

#include <vector>

#include <QWidget>

namespace dfi::ui {

class TokenStrip : public QWidget {
  Q_OBJECT
 public:
  struct Chip {
    QString text;
    QColor colour;
    int step = -1;              // the step that committed it; -1: prompt
    bool startsBlock = false;   // first token committed by its step
    QColor underline;           // a mark under the chip (a garbled draft slot); invalid: none
    QString toolTip;
  };

  explicit TokenStrip(QWidget* parent = nullptr);

  void setChips(std::vector<Chip> chips);
  const std::vector<Chip>& chips() const { return chips_; }
  void setHighlightedStep(int step);
  int chipAt(const QPoint& point) const;  // -1 when none
  QRect chipRect(int chip) const;

  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override;

 signals:
  void stepClicked(int step);

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  // Lays the chips out for `width`; returns the height used.
  int layoutChips(int width, std::vector<QRect>* rects) const;
  void measureChips();
  QRect stepArea(int step) const;  // the chips `step` committed

  std::vector<Chip> chips_;
  // Each chip's width, measured once per text and font: layouts ask for every chip's width
  // several times per change (heightForWidth, resize), and measuring shapes the text.
  std::vector<int> widths_;
  std::vector<QRect> rects_;
  int highlighted_ = -1;
};

}  // namespace dfi::ui
