#include "widgets/fitted_plot.h"

#include <algorithm>

namespace dfi::ui {
namespace {

// Dynamic properties that keep the owner's text beside the fitted one: a text that differs
// from the last fitted one was set by the owner since, and is the new full text.
constexpr const char* kFull = "dfiFullText";
constexpr const char* kFitted = "dfiFittedText";

QString ownerText(const QObject* holder, const QString& shown) {
  const QVariant fitted = holder->property(kFitted);
  return fitted.isValid() && fitted.toString() == shown ? holder->property(kFull).toString() : shown;
}

// Sets the fitted form of `full`; true when the shown text changed.
template <class SetText>
bool showFitted(QObject* holder, const QString& shown, const QString& full, const QString& fitted, SetText set) {
  holder->setProperty(kFull, full);
  holder->setProperty(kFitted, fitted);
  if (fitted == shown) return false;
  set(fitted);
  return true;
}

}  // namespace

QString wrapText(const QString& text, const QFontMetrics& metrics, int width, int maxLines) {
  if (width <= 0 || text.isEmpty()) return text;
  QStringList lines;
  for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
    QString line;
    for (const QString& word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
      const QString candidate = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
      if (line.isEmpty() || metrics.horizontalAdvance(candidate) <= width) {
        line = candidate;
      } else {
        lines << line;
        line = word;
      }
    }
    lines << line;
  }
  if (maxLines > 0 && lines.size() > maxLines) {
    QStringList kept = lines.mid(0, maxLines);
    kept.back() = lines.mid(maxLines - 1).join(QLatin1Char(' '));
    lines = kept;
  }
  // Only lines still too wide (a single long word, or what maxLines left over); elidedText
  // also shortens some lines that horizontalAdvance says fit.
  for (QString& line : lines)
    if (metrics.horizontalAdvance(line) > width) line = metrics.elidedText(line, Qt::ElideRight, width);
  return lines.join(QLatin1Char('\n'));
}

FittedPlot::FittedPlot(QWidget* parent) : QCustomPlot(parent) {
  // QCustomPlot repaints at once on every replot by default: with a dozen plots changing on one
  // selection, each repainted itself (and what lies under it) before the window's own paint.
  // An update instead lets Qt paint the window once.
  setPlottingHint(QCP::phImmediateRefresh, false);
}

QString FittedPlot::fullText(const QCPTextElement* title) { return ownerText(title, title->text()); }

QString FittedPlot::fullText(const QCPAxis* axis) { return ownerText(axis, axis->label()); }

QString FittedPlot::fullText(const QCPAbstractPlottable* plottable) { return ownerText(plottable, plottable->name()); }

void FittedPlot::updateLayout() {
  QCustomPlot::updateLayout();
  // Wrapping makes a title or a label taller: lay out once more with the fitted texts.
  if (fitTexts()) QCustomPlot::updateLayout();
}

bool FittedPlot::fitTexts() {
  bool changed = false;
  const int width = viewport().width();
  for (QCPLayoutElement* element : plotLayout()->elements(true)) {
    auto* title = qobject_cast<QCPTextElement*>(element);
    if (!title) continue;
    const QString full = fullText(title);
    const QMargins m = title->margins();
    const QString fitted = wrapText(full, QFontMetrics(title->font()), width - m.left() - m.right() - 4, 0);
    changed |= showFitted(title, title->text(), full, fitted, [title](const QString& t) { title->setText(t); });
  }
  for (QCPAxisRect* rect : axisRects())
    for (QCPAxis* axis : rect->axes()) {
      if (!axis->visible() || axis->label().isEmpty()) continue;
      const QString full = fullText(axis);
      const int length = axis->orientation() == Qt::Horizontal ? rect->width() : rect->height();
      if (length <= 0) continue;
      const QString fitted = wrapText(full, QFontMetrics(axis->labelFont()), length, 2);
      changed |= showFitted(axis, axis->label(), full, fitted, [axis](const QString& t) { axis->setLabel(t); });
    }
  for (QCPAxisRect* rect : axisRects())
    for (QCPAxis* axis : rect->axes(QCPAxis::atBottom | QCPAxis::atTop)) changed |= fitTickLabels(axis, rect->width());
  return fitLegend() || changed;
}

bool FittedPlot::fitLegend() {
  constexpr const char* kColumns = "dfiLegendColumns";  // the owner's wrap, kept the first time
  if (!legend || !legend->visible() || legend->itemCount() == 0) return false;
  if (!legend->property(kColumns).isValid()) legend->setProperty(kColumns, std::max(legend->wrap(), 1));
  const int ownerColumns = legend->property(kColumns).toInt();
  const QFontMetrics metrics(legend->font());
  std::vector<QCPAbstractPlottable*> entries;
  int widest = 0;
  for (int i = 0; i < legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
      entries.push_back(item->plottable());
      widest = std::max(widest, metrics.horizontalAdvance(fullText(item->plottable())));
    }
  if (entries.empty()) return false;
  const QMargins m = legend->margins();
  const int room = std::min(viewport().width(), legend->maximumSize().width()) - m.left() - m.right();
  // An entry is its icon, the padding after it, the text, and the item's own margins.
  const QMargins im = legend->item(0)->margins();
  const int overhead = legend->iconSize().width() + legend->iconTextPadding() + im.left() + im.right() + 4;
  const int columns = ownerColumns > 1 && widest + overhead <= room / ownerColumns ? ownerColumns : 1;
  bool changed = false;
  if (legend->wrap() != columns && ownerColumns > 1) {
    legend->setWrap(columns);
    legend->setFillOrder(legend->fillOrder(), true);  // setWrap alone leaves the entries where they were
    changed = true;
  }
  const int textRoom = room / columns - overhead;
  for (QCPAbstractPlottable* p : entries) {
    const QString full = fullText(p);
    const QString fitted = textRoom > 0 && metrics.horizontalAdvance(full) > textRoom
                               ? metrics.elidedText(full, Qt::ElideMiddle, textRoom)
                               : full;
    changed |= showFitted(p, p->name(), full, fitted, [p](const QString& t) { p->setName(t); });
  }
  return changed;
}

// Named ticks (tensor names, run names) wider than the room between them are turned upright;
// side by side they ran into each other.
bool FittedPlot::fitTickLabels(QCPAxis* axis, int length) {
  constexpr const char* kTurned = "dfiTurnedTicks";
  const auto named = axis->ticker().dynamicCast<QCPAxisTickerText>();
  double rotation = 0;
  if (named && named->ticks().size() > 1 && length > 0 && axis->range().size() > 0) {
    const QList<double> keys = named->ticks().keys();
    double gap = axis->range().size();
    for (qsizetype i = 1; i < keys.size(); ++i) gap = std::min(gap, keys[i] - keys[i - 1]);
    const double room = gap * length / axis->range().size();
    const QFontMetrics metrics(axis->tickLabelFont());
    int widest = 0;
    for (const QString& label : named->ticks())
      for (const QString& line : label.split(QLatin1Char('\n'))) widest = std::max(widest, metrics.horizontalAdvance(line));
    rotation = widest + 6 > room ? -90 : 0;
  } else if (!axis->property(kTurned).toBool()) {
    return false;  // not turned by us: the owner's rotation stays
  }
  axis->setProperty(kTurned, rotation != 0);
  if (axis->tickLabelRotation() == rotation) return false;
  axis->setTickLabelRotation(rotation);
  return true;
}

}  // namespace dfi::ui
