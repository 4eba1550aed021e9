#include "widgets/attention_grid.h"

#include <algorithm>
#include <cmath>

#include <QMouseEvent>
#include <QPainter>

namespace dfi::ui {
namespace {

constexpr int kThumbWidth = 72;
constexpr int kThumbHeight = 36;
constexpr int kGap = 4;
constexpr int kGroupGap = 8;   // extra space between GQA groups
constexpr int kLeft = 34;      // layer labels
constexpr int kTop = 34;       // kv-group brackets and head labels

QImage thumbnail(const AttentionLayer& layer, const float* cells) {
  const int w = static_cast<int>(std::min<std::int64_t>(layer.keys, kThumbWidth));
  const int h = static_cast<int>(std::min<std::int64_t>(layer.queries, kThumbHeight));
  std::vector<float> pooled(static_cast<std::size_t>(w * h), 0.0f);
  for (std::int64_t q = 0; q < layer.queries; ++q) {
    const int y = static_cast<int>(q * h / layer.queries);
    for (std::int64_t k = 0; k < layer.keys; ++k) {
      const int x = static_cast<int>(k * w / layer.keys);
      float& cell = pooled[static_cast<std::size_t>(y * w + x)];
      cell = std::max(cell, cells[q * layer.keys + k]);
    }
  }
  const float top = std::max(1e-12f, *std::max_element(pooled.begin(), pooled.end()));
  QImage image(w, h, QImage::Format_RGB32);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float v = pooled[static_cast<std::size_t>(y * w + x)];
      image.setPixelColor(x, y, v == 0.0f ? AttentionGrid::maskedColour() : AttentionGrid::colour(v / top));
    }
  return image;
}

}  // namespace

AttentionGrid::AttentionGrid(QWidget* parent) : QWidget(parent) {
  setToolTip(tr("Every layer (rows) and head (columns) of the drafter, then the mean and the max over heads; "
                "heads bracketed together share a kv head (GQA). Each thumbnail is scaled to its own maximum. "
                "Click one to show it."));
  setBackgroundRole(QPalette::Base);
  setAutoFillBackground(true);
}

QColor AttentionGrid::colour(double value) {
  // A perceptual dark-blue -> yellow ramp (viridis-like), so low and high read at a glance.
  static const QColor stops[] = {QColor(68, 1, 84), QColor(59, 82, 139), QColor(33, 145, 140),
                                 QColor(94, 201, 98), QColor(253, 231, 37)};
  const double v = std::clamp(std::isfinite(value) ? value : 0.0, 0.0, 1.0) * 4.0;
  const int i = std::min(3, static_cast<int>(v));
  const double t = v - i;
  const QColor& a = stops[i];
  const QColor& b = stops[i + 1];
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

void AttentionGrid::setLayers(const std::vector<AttentionLayer>& layers, int headsPerKvHead) {
  layerIds_.clear();
  images_.clear();
  heads_ = 0;
  group_ = std::max(1, headsPerKvHead);
  for (const AttentionLayer& layer : layers) {
    heads_ = std::max<int>(heads_, static_cast<int>(layer.heads));
    layerIds_.push_back(layer.layer);
    std::vector<QImage> row;
    const auto cells = static_cast<std::size_t>(layer.queries * layer.keys);
    for (std::int64_t h = 0; h < layer.heads; ++h) row.push_back(thumbnail(layer, layer.probs.data() + h * cells));
    row.push_back(thumbnail(layer, reduceHeads(layer, false).data()));
    row.push_back(thumbnail(layer, reduceHeads(layer, true).data()));
    images_.push_back(std::move(row));
  }
  if (heads_ % group_ != 0) group_ = 1;
  updateGeometry();
  update();
}

void AttentionGrid::setCurrent(int layer, int head) {
  currentLayer_ = layer;
  currentHead_ = head;
  update();
}

int AttentionGrid::columnOf(int head) const {
  if (head == kMean) return heads_;
  if (head == kMax) return heads_ + 1;
  return head;
}

int AttentionGrid::xOf(int column) const {
  // Heads grouped by kv head; the two summary columns after one more gap.
  const int groups = column < heads_ ? column / group_ : heads_ / group_ + 1;
  return kLeft + column * (kThumbWidth + kGap) + groups * kGroupGap;
}

QRect AttentionGrid::thumbnailRect(int row, int head) const {
  return {xOf(columnOf(head)), kTop + row * (kThumbHeight + kGap), kThumbWidth, kThumbHeight};
}

QSize AttentionGrid::sizeHint() const {
  if (images_.empty()) return {320, 120};
  const QRect last = thumbnailRect(static_cast<int>(images_.size()) - 1, kMax);
  return {last.right() + kGap + 2, last.bottom() + kGap + 2};
}

void AttentionGrid::paintEvent(QPaintEvent*) {
  QPainter p(this);
  if (images_.empty()) {
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, tr("No attention recorded for this block"));
    return;
  }
  p.setFont(font());  // head numbers at the text size of the rest (no text under 9 pt)
  // kv-group brackets and head numbers.
  for (int g = 0; g * group_ < heads_; ++g) {
    const QRect first = thumbnailRect(0, g * group_);
    const QRect last = thumbnailRect(0, std::min(heads_, (g + 1) * group_) - 1);
    const int y = 6;
    if (group_ > 1) {
      p.setPen(palette().color(QPalette::Mid));
      p.drawLine(first.left(), y + 8, last.right(), y + 8);
      p.drawLine(first.left(), y + 8, first.left(), y + 12);
      p.drawLine(last.right(), y + 8, last.right(), y + 12);
      p.setPen(palette().color(QPalette::Text));
      p.drawText(QRect(first.left(), y - 6, last.right() - first.left(), 14), Qt::AlignCenter,
                 tr("kv %1").arg(g));
    }
  }
  p.setPen(palette().color(QPalette::Text));
  for (int h = 0; h < heads_ + 2; ++h) {
    const int head = h < heads_ ? h : (h == heads_ ? kMean : kMax);
    const QRect r = thumbnailRect(0, head);
    const QString text = h < heads_ ? QStringLiteral("h%1").arg(h) : (head == kMean ? tr("mean") : tr("max"));
    p.drawText(QRect(r.left(), kTop - 16, r.width(), 14), Qt::AlignCenter, text);
  }
  for (std::size_t row = 0; row < images_.size(); ++row) {
    const QRect label(0, thumbnailRect(static_cast<int>(row), 0).top(), kLeft - 4, kThumbHeight);
    p.drawText(label, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("L%1").arg(layerIds_[row]));
    const auto& images = images_[row];
    for (std::size_t c = 0; c < images.size(); ++c) {
      const int head = c < static_cast<std::size_t>(images.size() - 2) ? static_cast<int>(c)
                                                                       : (c == images.size() - 2 ? kMean : kMax);
      const QRect r = thumbnailRect(static_cast<int>(row), head);
      p.drawImage(r, images[c]);
      if (layerIds_[row] == currentLayer_ && head == currentHead_) {
        p.setPen(QPen(QColor(230, 30, 30), 2));
        p.drawRect(r.adjusted(-1, -1, 1, 1));
        p.setPen(palette().color(QPalette::Text));
      }
    }
  }
}

void AttentionGrid::mousePressEvent(QMouseEvent* event) {
  for (std::size_t row = 0; row < images_.size(); ++row)
    for (int c = 0; c < heads_ + 2; ++c) {
      const int head = c < heads_ ? c : (c == heads_ ? kMean : kMax);
      if (thumbnailRect(static_cast<int>(row), head).contains(event->position().toPoint())) {
        setCurrent(layerIds_[row], head);
        emit chosen(layerIds_[row], head);
        return;
      }
    }
}

}  // namespace dfi::ui
