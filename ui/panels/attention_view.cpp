#include "panels/attention_view.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QVBoxLayout>

#include "engine/inspect_answer.h"
#include "session/session_context.h"
#include "widgets/attention_grid.h"
#include "widgets/empty_hint.h"
#include "widgets/heatmap_plot.h"

namespace dfi::ui {

QCPColorGradient AttentionView::gradient() {
  QCPColorGradient g;
  g.clearColorStops();
  for (int i = 0; i <= 8; ++i) g.setColorStopAt(i / 8.0, AttentionGrid::colour(i / 8.0));
  // A probability of exactly 0 is a masked key (softmax of -inf): drawn grey, apart from
  // keys that are allowed but barely attended.
  g.setNanHandling(QCPColorGradient::nhNanColor);
  g.setNanColor(AttentionView::maskedColour());
  return g;
}

AttentionView::AttentionView(SessionContext* context, QWidget* parent)
    : BlockProbePanel(context, tr("Select a block to see the drafter's attention."),
                      tr("Re-draft this block in dflash-eval serve with every probe on; the attention and "
                         "statistics it returns are stored in the session"),
                      parent),
      layerBox_(new QComboBox),
      headBox_(new QComboBox),
      plot_(new HeatmapPlot),
      grid_(new AttentionGrid) {
  plot_->setGradient(gradient(), QCPRange(0, 1));
  plot_->xAxis->setLabel(tr("key: context positions | block slots"));
  plot_->yAxis->setLabel(tr("query slot"));
  plot_->setMinimumSize(320, 200);
  boundary_ = new QCPItemStraightLine(plot_);
  boundary_->setPen(QPen(QColor(255, 255, 255), 2, Qt::DashLine));
  boundary_->setVisible(false);

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("layer")));
  controls->addWidget(layerBox_);
  controls->addWidget(new QLabel(tr("head")));
  controls->addWidget(headBox_);
  controls->addStretch(1);
  controls->addWidget(fetch_);

  auto* scroll = gridScroll_ = new QScrollArea;
  scroll->setWidget(grid_);
  scroll->setWidgetResizable(false);
  scroll->setBackgroundRole(QPalette::Base);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(plot_);
  split->addWidget(scroll);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(headline_);
  layout->addLayout(controls);
  layout->addWidget(split, 1);
  layout->addWidget(status_);

  connect(layerBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (!updatingBoxes_) choose(layerBox_->currentData().toInt(), head_);
  });
  connect(headBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (!updatingBoxes_) choose(layer_, headBox_->currentData().toInt());
  });
  connect(grid_, &AttentionGrid::chosen, this, &AttentionView::choose);
  connect(plot_, &HeatmapPlot::cellHovered, this, [this](qint64 row, qint64 column) {
    const std::vector<float> map = currentMap();
    const AttentionLayer* l = currentLayer();
    if (!l || map.empty()) return;
    status_->setText(tr("query slot %1 -> key %2: p = %3")
                         .arg(row)
                         .arg(keyLabel(column))
                         .arg(static_cast<double>(map[static_cast<std::size_t>(row * l->keys + column)]), 0, 'g', 4));
  });
  addExportMenu(plot_, QStringLiteral("attention"), [this] { return exportData(); });
  attach();
  if (!step_) showMap();  // says what to select
}

void AttentionView::loadSelection() {
  sequence_.clear();
  headsPerKv_ = 1;
  if (readSelectedStep()) {
    if (const auto run = context_->run(step_->runId)) headsPerKv_ = headsPerKvHead(run->drafter.configJson);
    if (const auto prompt = context_->prompt(step_->runId, step_->promptId))
      if (const auto ids = sequenceThroughAnchor(prompt->promptTokens, context_->steps(step_->runId, step_->promptId),
                                                 step_->anchorPosition))
        sequence_ = *ids;
    headline_->setText(tr("%1, \"%2\", step %3: block at anchor position %4, mask variant %5")
                           .arg(context_->runName(step_->runId))
                           .arg(context_->promptName(step_->runId, step_->promptId))
                           .arg(step_->stepIndex)
                           .arg(step_->anchorPosition)
                           .arg(QString::fromStdString(step_->maskVariant)));
  }
  reload();
}

void AttentionView::reload() {
  updatingBoxes_ = true;
  layerBox_->clear();
  for (const AttentionLayer& l : probes_.attention) layerBox_->addItem(tr("L%1").arg(l.layer), l.layer);
  headBox_->clear();
  headBox_->addItem(tr("mean over heads"), AttentionGrid::kMean);
  headBox_->addItem(tr("max over heads"), AttentionGrid::kMax);
  const std::int64_t heads = probes_.attention.empty() ? 0 : probes_.attention.front().heads;
  for (std::int64_t h = 0; h < heads; ++h)
    headBox_->addItem(headsPerKv_ > 1 ? tr("head %1 (kv %2)").arg(h).arg(h / headsPerKv_) : tr("head %1").arg(h),
                      static_cast<int>(h));
  updatingBoxes_ = false;
  grid_->setLayers(probes_.attention, headsPerKv_);
  grid_->adjustSize();
  // The grid takes the room its thumbnails need (up to about half the panel), the map the rest.
  gridScroll_->setMaximumHeight(grid_->sizeHint().height() + 2 * gridScroll_->frameWidth() +
                                gridScroll_->horizontalScrollBar()->sizeHint().height());
  fetch_->setEnabled(canFetch());
  if (!step_) {
    status_->setText({});
  } else if (probes_.attention.empty()) {
    status_->setText(hasEngine() ? tr("The session holds no attention for this block: Fetch from engine to compute and store it.")
                                 : tr("The session holds no attention for this block."));
  } else {
    status_->setText(tr("%1 layers x %2 heads (%3 per kv head), %4 query slots x %5 keys (context %6 + block %4); "
                        "grey: masked (p = 0); dashed line: context | block")
                         .arg(probes_.attention.size())
                         .arg(heads)
                         .arg(headsPerKv_)
                         .arg(probes_.attention.front().queries)
                         .arg(probes_.attention.front().keys)
                         .arg(probes_.attention.front().keys - probes_.attention.front().queries));
  }
  const bool keep = std::ranges::any_of(probes_.attention, [&](const AttentionLayer& l) { return l.layer == layer_; });
  choose(keep ? layer_ : (probes_.attention.empty() ? 0 : probes_.attention.front().layer),
         head_ < heads ? head_ : AttentionGrid::kMean);
}

const AttentionLayer* AttentionView::currentLayer() const {
  for (const AttentionLayer& l : probes_.attention)
    if (l.layer == layer_) return &l;
  return nullptr;
}

std::vector<float> AttentionView::currentMap() const {
  const AttentionLayer* l = currentLayer();
  if (!l) return {};
  if (head_ == AttentionGrid::kMean || head_ == AttentionGrid::kMax) return reduceHeads(*l, head_ == AttentionGrid::kMax);
  if (head_ < 0 || head_ >= l->heads) return {};
  const auto cells = static_cast<std::size_t>(l->queries * l->keys);
  const float* p = l->probs.data() + static_cast<std::size_t>(head_) * cells;
  return {p, p + cells};
}

void AttentionView::choose(int layer, int head) {
  layer_ = layer;
  head_ = head;
  updatingBoxes_ = true;
  layerBox_->setCurrentIndex(layerBox_->findData(layer));
  headBox_->setCurrentIndex(headBox_->findData(head));
  updatingBoxes_ = false;
  grid_->setCurrent(layer, head);
  showMap();
}

QString AttentionView::keyLabel(std::int64_t key) const {
  const AttentionLayer* l = currentLayer();
  if (!l || !context_) return QString::number(key);
  const std::int64_t context = l->keys - l->queries;
  if (key < context) {
    if (key < static_cast<std::int64_t>(sequence_.size()))
      return QStringLiteral("%1 %2").arg(key).arg(context_->tokenText(static_cast<session::TokenId>(sequence_[key])));
    return QString::number(key);
  }
  const std::int64_t slot = key - context;
  if (step_) {
    if (slot == 0) return QStringLiteral("s0 %1").arg(context_->tokenText(step_->anchorToken));
    if (slot - 1 < static_cast<std::int64_t>(step_->draftTokens.size()))
      return QStringLiteral("s%1 %2").arg(slot).arg(context_->tokenText(step_->draftTokens[static_cast<std::size_t>(slot - 1)]));
  }
  return QStringLiteral("s%1").arg(slot);
}

void AttentionView::showMap() {
  const AttentionLayer* l = currentLayer();
  const std::vector<float> map = currentMap();
  if (!l || map.empty()) {
    setEmptyHint(plot_, !step_ ? tr("Select a step in the navigator to see the drafter's attention over its block.")
                        : hasEngine() ? tr("The session holds no attention for this block: Fetch from engine computes "
                                           "and stores it.")
                                      : tr("The session holds no attention for this block (record it with "
                                           "dflash-eval, or fetch it from an engine)."));
    boundary_->setVisible(false);
    plot_->setCells(0, 0, {}, true);
    plot_->xAxis->setLabel(tr("key: context positions | block slots"));
    plot_->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  setEmptyHint(plot_, {});
  const float top = std::max(1e-6f, *std::max_element(map.begin(), map.end()));
  plot_->setGradient(gradient(), QCPRange(0, top));
  const std::int64_t keys = l->keys;
  auto data = std::make_shared<const std::vector<float>>(map);
  plot_->setCells(l->queries, l->keys,
                  [data, keys](std::int64_t r, std::int64_t c) {
                    const float p = (*data)[static_cast<std::size_t>(r * keys + c)];
                    return p == 0.0f ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(p);
                  },
                  true);
  plot_->setColumnLabels([this](std::int64_t column) { return keyLabel(column); });
  // Query rows: the block slot and the token it drafted (slot 0: the anchor).
  plot_->setRowLabels([this, context = l->keys - l->queries](std::int64_t row) { return keyLabel(context + row); });
  const double boundary = static_cast<double>(l->keys - l->queries) - 0.5;
  boundary_->point1->setCoords(boundary, 0);
  boundary_->point2->setCoords(boundary, 1);
  boundary_->setVisible(true);
  const QString which = head_ == AttentionGrid::kMean ? tr("mean over heads")
                        : head_ == AttentionGrid::kMax ? tr("max over heads")
                                                       : tr("head %1").arg(head_);
  plot_->xAxis->setLabel(tr("key: context positions 0..%1 | block slots (layer %2, %3; colour 0 .. %4)")
                             .arg(l->keys - l->queries - 1)
                             .arg(l->layer)
                             .arg(which)
                             .arg(static_cast<double>(top), 0, 'g', 3));
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void AttentionView::showAnswer(const InspectAnswer& answer) {
  if (!step_ || answer.step != step_->stepId) {  // another block's answer: this one may ask now
    fetch_->setEnabled(step_.has_value());
    return;
  }
  if (answer.stored) {
    probes_ = loadBlockProbes(*context_, step_->runId, step_->stepId);
  } else {
    BlockProbes fresh = groupStatistics(answer.statistics);
    for (const auto& t : answer.tensors) {
      if (!t.info.name.ends_with(".attn.probs") || t.info.shape.size() != 3) continue;
      AttentionLayer layer{t.info.layer, t.info.shape[0], t.info.shape[1], t.info.shape[2], {}};
      layer.probs.resize(t.data.size() / sizeof(float));
      std::memcpy(layer.probs.data(), t.data.data(), layer.probs.size() * sizeof(float));
      fresh.attention.push_back(std::move(layer));
    }
    probes_ = std::move(fresh);
  }
  reload();
  if (!answer.stored) status_->setText(status_->text() + tr(" — not stored (%1)").arg(answer.storeError));
}

QColor AttentionView::maskedColour() { return AttentionGrid::maskedColour(); }

CsvTable AttentionView::exportData() {
  const AttentionLayer* l = currentLayer();
  const std::vector<float> map = currentMap();
  if (!l || map.empty()) return {};
  CsvTable table;
  table.header << tr("query slot \\ key");
  for (std::int64_t k = 0; k < l->keys; ++k) table.header << keyLabel(k);
  for (std::int64_t q = 0; q < l->queries; ++q) {
    QStringList row{keyLabel(l->keys - l->queries + q)};
    for (std::int64_t k = 0; k < l->keys; ++k)
      row << QString::number(static_cast<double>(map[static_cast<std::size_t>(q * l->keys + k)]), 'g', 6);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace dfi::ui
