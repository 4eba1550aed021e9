#include "panels/block_pair_view.h"

#include <algorithm>
#include <limits>
#include <memory>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "session/session_context.h"
#include "dfi/session/record_fields.h"
#include "models/block_probes.h"
#include "models/mask_layout.h"
#include "models/token_table_model.h"
#include "widgets/heatmap_plot.h"
#include "panels/attention_view.h"
#include "panels/mask_view.h"

namespace dfi::ui {
namespace {

// Context keys shown left of the block: the ones near the anchor, where masks and attention
// of two runs differ; the rest is a drag away.
constexpr std::int64_t kContextShown = 24;

void showNearAnchor(HeatmapPlot* plot, std::int64_t contextColumns) {
  const double first = static_cast<double>(std::max<std::int64_t>(0, contextColumns - kContextShown));
  plot->xAxis->setRange(first - 0.5, static_cast<double>(plot->columns()) - 0.5);
}

}  // namespace

BlockPairView::BlockPairView(SessionContext* context, QWidget* parent)
    : QWidget(parent), context_(context), hint_(new QLabel(tr("Choose a block in the list of regressions to see "
                                                              "A's block and B's block side by side."))) {
  hint_->setWordWrap(true);
  auto* columns = new QHBoxLayout;
  for (Side& side : sides_) {
    side.headline = new QLabel;
    side.headline->setWordWrap(true);
    side.headline->setTextFormat(Qt::PlainText);
    side.tokens = new TokenTableModel(this);
    side.table = newTokenTable(side.tokens);
    // What the two sides are compared on; the token panel has the rest.
    for (int c : {TokenTableModel::PositionColumn, TokenTableModel::TreePathColumn, TokenTableModel::TargetRankColumn,
                  TokenTableModel::EntropyColumn, TokenTableModel::ConfidenceColumn, TokenTableModel::OverlapColumn})
      side.table->setColumnHidden(c, true);
    side.pictureCaption = new QLabel;
    side.pictureCaption->setWordWrap(true);
    side.picture = new HeatmapPlot;
    side.picture->setMinimumSize(220, 110);
    side.picture->yAxis->setLabel(tr("query slot"));
    auto* column = new QVBoxLayout;
    column->addWidget(side.headline);
    column->addWidget(side.table, 2);  // the tokens first: the picture is the context
    column->addWidget(side.pictureCaption);
    column->addWidget(side.picture, 1);
    columns->addLayout(column, 1);
  }
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(hint_);
  layout->addLayout(columns, 1);
  clear();
}

void BlockPairView::clear() {
  hint_->show();
  for (Side& side : sides_) {
    side.step = 0;
    side.showsAttention = false;
    side.headline->clear();
    side.tokens->clear();
    side.pictureCaption->clear();
    side.picture->setCells(0, 0, {}, true);
    for (QWidget* w : {static_cast<QWidget*>(side.headline), static_cast<QWidget*>(side.table),
                       static_cast<QWidget*>(side.pictureCaption), static_cast<QWidget*>(side.picture)})
      w->hide();
  }
}

void BlockPairView::showPair(session::StepId a, session::StepId b) {
  clear();
  if (!context_ || (!a && !b)) return;
  hint_->hide();
  showSide(sides_[0], tr("A"), a);
  showSide(sides_[1], tr("B"), b);
}

void BlockPairView::showSide(Side& side, const QString& letter, session::StepId stepId) {
  side.headline->show();
  const std::optional<session::StepRecord> step = stepId ? context_->step(stepId) : std::nullopt;
  if (!step) {
    side.headline->setText(tr("%1: no block at this prompt and anchor").arg(letter));
    return;
  }
  side.step = stepId;
  const std::optional<session::RunRecord> run = context_->run(step->runId);
  const bool ddtree = step->mode == session::EvaluationMode::DDTree;
  side.tokens->setBlock(*step, run ? run->topK : 0, [this](session::TokenId id) { return context_->tokenText(id); },
                        ddtree ? context_->tree(step->stepId) : std::nullopt);
  side.table->setColumnHidden(TokenTableModel::TreePathColumn, !side.tokens->hasTreePath());
  side.headline->setText(tr("%1: %2, prompt %3, step %4, anchor %5: %6 of %7 drafts accepted (mask %8)")
                             .arg(letter, context_->runName(step->runId))
                             .arg(step->promptId)
                             .arg(step->stepIndex)
                             .arg(step->anchorPosition)
                             .arg(ddtree ? chainAcceptedCount(*step) : step->acceptedCount)
                             .arg(step->draftTokens.size())
                             .arg(run ? QString::fromUtf8(enumName(run->maskVariant).data())
                                      : QString::fromStdString(step->maskVariant)));
  side.table->show();
  side.pictureCaption->show();
  side.picture->show();
  side.showsAttention = false;
  const BlockProbes probes = loadBlockProbes(*context_, step->runId, step->stepId);
  if (!probes.attention.empty()) {
    side.showsAttention = true;
    const AttentionLayer& last = probes.attention.back();
    const std::vector<float> mean = reduceHeads(last, false);
    const float top = std::max(1e-6f, *std::max_element(mean.begin(), mean.end()));
    side.picture->setGradient(AttentionView::gradient(), QCPRange(0, top));
    auto data = std::make_shared<const std::vector<float>>(mean);
    const std::int64_t keys = last.keys;
    side.picture->setCells(last.queries, keys,
                           [data, keys](std::int64_t r, std::int64_t c) {
                             const float p = (*data)[static_cast<std::size_t>(r * keys + c)];
                             return p == 0.0f ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(p);
                           },
                           true);
    const std::int64_t context = last.keys - last.queries;
    showNearAnchor(side.picture, context);
    side.picture->xAxis->setLabel(tr("key: context positions | block slots"));
    side.picture->setColumnLabels([context](std::int64_t c) {
      return c < context ? QString::number(c) : QStringLiteral("s%1").arg(c - context);
    });
    side.pictureCaption->setText(tr("Recorded attention, layer %1, mean over %2 heads (grey: masked)")
                                     .arg(last.layer)
                                     .arg(last.heads));
  } else if (run) {
    drawMask(side, *step, *run);
  } else {
    side.pictureCaption->setText(tr("The session holds neither attention nor the run of this block."));
    side.picture->setCells(0, 0, {}, true);
  }
  side.picture->replot(QCustomPlot::rpQueuedReplot);
}

void BlockPairView::drawMask(Side& side, const session::StepRecord& step, const session::RunRecord& run) {
  MaskScene scene;
  scene.spec.variant = run.maskVariant;
  scene.spec.blockSize = run.blockSize > 0 ? run.blockSize : static_cast<int>(step.draftTokens.size()) + 1;
  scene.anchor = step.anchorPosition;
  auto layout = std::make_shared<const MaskLayout>(scene);
  QCPColorGradient gradient;
  gradient.clearColorStops();
  gradient.setColorStopAt(0, MaskView::colour(false, kMasked));
  gradient.setColorStopAt(1, MaskView::colour(false, kAllowed));
  gradient.setLevelCount(2);
  side.picture->setGradient(gradient, QCPRange(0, 1));
  side.picture->setCells(layout->rows(), layout->columns(),
                         [layout](std::int64_t r, std::int64_t c) { return static_cast<double>(layout->value(r, c)); },
                         true);
  const std::int64_t context = layout->contextColumns();
  showNearAnchor(side.picture, context);
  side.picture->xAxis->setLabel(tr("key: context positions 0..anchor | block slots"));
  side.picture->setColumnLabels([context](std::int64_t c) {
    return c < context ? QString::number(c) : QStringLiteral("s%1").arg(c - context);
  });
  side.pictureCaption->setText(tr("The %1 mask the run ran with (blue: allowed); no attention recorded for this "
                                  "block (Attention panel: Fetch from engine)")
                                   .arg(QString::fromUtf8(enumName(run.maskVariant).data())));
}

}  // namespace dfi::ui
