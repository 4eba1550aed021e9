#pragma once
// A QCustomPlot whose words always fit: a title (a QCPTextElement of the plot layout) wider
// than the plot is wrapped onto more lines, and an axis label longer than its axis is wrapped
// onto two and then elided, instead of being cut at both ends ("alue over the hidden dime").
// The texts are refitted on every layout, so a plot that grows gets its one-line title back;
// what the owner sets with setText / setLabel stays the full text. Named tick labels (a
// QCPAxisTickerText) that would run into each other are turned upright. Legend entries (run
// names, mostly) are elided in the middle to the legend's room, in one column when the owner's
// columns would cut them: "drafter-good/te…ed/reference" and "drafter-good/live/reference"
// stay told apart, where cutting the ends made two runs read the same.

#include <qcustomplot.h>

namespace dfi::ui {

class FittedPlot : public QCustomPlot {
  Q_OBJECT
 public:
  explicit FittedPlot(QWidget* parent = nullptr);

  // The full text of a title or an axis label, as its owner set it (the shown one may be wrapped).
  static QString fullText(const QCPTextElement* title);
  static QString fullText(const QCPAxis* axis);
  static QString fullText(const QCPAbstractPlottable* plottable);

 protected:
  void updateLayout() override;

 private:
  bool fitTexts();  // true when a text changed (the layout must be redone)
  static bool fitTickLabels(QCPAxis* axis, int length);
  bool fitLegend();
};

// `text` broken at spaces into lines no wider than `width` for `metrics`, at most `maxLines`
// of them (0: any number), the last one elided when the words do not fit.
QString wrapText(const QString& text, const QFontMetrics& metrics, int width, int maxLines);

}  // namespace dfi::ui
