#include "panels/mask_view.h"

#include <QCursor>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "session/run_drafter_config.h"
#include "session/session_context.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "widgets/heatmap_plot.h"
#include "panels/mask_controls.h"
#include "dfi/session/record_fields.h"

namespace dfi::ui {
namespace {

QString variantName(analysis::MaskVariant v) { return QString::fromUtf8(enumName(v).data()); }

// Block columns are labelled by slot ("s3"; "b2.s3" in the training layout), context ones by position.
QString keyLabel(std::int64_t column, std::int64_t contextColumns, int blockSize, bool training) {
  if (column < contextColumns) return QString::number(column);
  const std::int64_t k = column - contextColumns;
  return training ? QStringLiteral("b%1.s%2").arg(k / blockSize).arg(k % blockSize) : QStringLiteral("s%1").arg(k);
}

// A CSV of every cell is for masks one can open in a spreadsheet, not the 8k x 16k ones.
constexpr std::int64_t kMaxCsvCells = std::int64_t{1} << 22;

QString cellText(const analysis::MaskCell& cell) {
  return QStringLiteral("%1 (%2)").arg(cell.allowed ? QObject::tr("allowed") : QObject::tr("masked"),
                                       QString::fromUtf8(analysis::maskReasonText(cell.reason).data()));
}

}  // namespace

MaskView::MaskView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      controls_(new MaskControls),
      plot_(new HeatmapPlot),
      hover_(new QLabel),
      zoomToDifferences_(new QPushButton(tr("Zoom to the differences"))),
      showAll_(new QPushButton(tr("Show all"))) {
  hover_->setTextFormat(Qt::PlainText);
  hover_->setWordWrap(true);
  hover_->setMinimumHeight(3 * fontMetrics().height());
  hover_->setText(tr("Hover over a cell to see why it is or is not allowed."));
  controls_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
  zoomToDifferences_->setToolTip(tr("Zoom both axes onto the cells that differ in the first block that has any"));
  connect(zoomToDifferences_, &QPushButton::clicked, this, [this] { zoomToDifferences(); });
  connect(showAll_, &QPushButton::clicked, this, [this] { plot_->showAll(); });
  auto* zoomRow = new QHBoxLayout;
  zoomRow->addWidget(hover_, 1);
  zoomRow->addWidget(zoomToDifferences_, 0, Qt::AlignTop);
  zoomRow->addWidget(showAll_, 0, Qt::AlignTop);
  auto* right = new QVBoxLayout;
  right->addWidget(plot_, 1);
  right->addLayout(zoomRow);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(controls_, 0, Qt::AlignTop);
  layout->addLayout(right, 1);
  buildPlotDecorations();
  addExportMenu(plot_, QStringLiteral("mask"), [this] { return exportData(); });

  connect(controls_, &MaskControls::changed, this, &MaskView::rebuild);
  connect(plot_, &HeatmapPlot::cellHovered, this, [this](qint64 row, qint64 column) {
    const QString text = describeCell(row, column);
    hover_->setText(text);
    QToolTip::showText(QCursor::pos(), text, plot_);
  });
  connect(plot_, &HeatmapPlot::hoverLeft, this, [] { QToolTip::hideText(); });
  if (context_) context_->addViewer(this);
  rebuild();
}

MaskView::~MaskView() {
  if (context_) context_->removeViewer(this);
}

void MaskView::buildPlotDecorations() {
  title_ = new QCPTextElement(plot_, QString(), QFont(font().family(), font().pointSize() + 1, QFont::Bold));
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0, title_);
  boundary_ = new QCPItemStraightLine(plot_);
  boundary_->setPen(QPen(QColor(255, 140, 0), 1.5, Qt::DashLine));
  // The legend sits in its own row under the axis rect, so it never covers cells.
  plot_->legend->setVisible(true);
  plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->plotLayout()->addElement(2, 0, plot_->legend);
  plot_->plotLayout()->setRowStretchFactor(2, 0.001);
  plot_->legend->setBorderPen(Qt::NoPen);
  for (QCPGraph*& entry : legendEntries_) {
    entry = plot_->addGraph();
    entry->setLineStyle(QCPGraph::lsNone);
  }
  // Differing cells keep a marker of a few pixels however far out the view is zoomed: drawn
  // at one cell per pixel, 59 anchors' worth of them were a one-pixel edge.
  outlines_ = plot_->addGraph();
  outlines_->setLineStyle(QCPGraph::lsNone);
  outlines_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(colour(true, kDiffer).darker(160), 1.5), Qt::NoBrush, 7));
  outlines_->removeFromLegend();
}

QColor MaskView::colour(bool diff, int value) {
  if (!diff) return value == kAllowed ? QColor(0x21, 0x66, 0xac) : QColor(0xec, 0xec, 0xec);
  switch (value) {
    case kBothAllowed: return QColor(0x9e, 0xca, 0xe1);
    case kDiffer: return QColor(0xd7, 0x30, 0x1f);
    default: return QColor(0xec, 0xec, 0xec);
  }
}

void MaskView::updateLegend(bool diff) {
  const int levels = diff ? 3 : 2;
  QCPColorGradient gradient;
  gradient.clearColorStops();
  for (int v = 0; v < levels; ++v) gradient.setColorStopAt(static_cast<double>(v) / (levels - 1), colour(diff, v));
  gradient.setLevelCount(levels);
  plot_->setGradient(gradient, QCPRange(0, levels - 1));

  const QStringList names = diff ? QStringList{tr("both masked"), tr("both allowed"), tr("differ")}
                                 : QStringList{tr("masked"), tr("allowed"), QString()};
  for (int v = 0; v < 3; ++v) {
    QCPGraph* entry = legendEntries_[v];
    entry->setName(names[v]);
    entry->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(Qt::darkGray), colour(diff, v), 11));
    if (v < levels) {
      entry->addToLegend();
    } else {
      entry->removeFromLegend();
    }
  }
}

// The response as one training sequence: every token rebuilt, and at least every anchor.
std::int64_t MaskView::responseLength() const {
  const auto tokens = static_cast<std::int64_t>(sequence_.tokens.size());
  return responseAnchors_.empty() ? tokens : std::max(tokens, responseAnchors_.back() + 1);
}

MaskScene MaskView::currentScene() const {
  MaskScene scene = controls_->scene();
  if (!controls_->followSelection() || !step_) return scene;
  scene.anchor = step_->anchorPosition;
  scene.spec.blockSize = runBlockSize_;
  scene.spec.causal = runCausal_;
  scene.spec.windowFromAnchor = runWindowFromAnchor_;
  if (scene.layout == MaskLayoutKind::Training && !responseAnchors_.empty()) {
    // The response as one training sequence, with every step's anchor as a training anchor.
    scene.sequenceLength = responseLength();
    scene.anchors = responseAnchors_;
  }
  return scene;
}

void MaskView::rebuild() {
  const MaskScene scene = currentScene();
  std::shared_ptr<const MaskLayout> layout;
  try {
    layout = std::make_shared<const MaskLayout>(scene);
  } catch (const dfi::Error& e) {
    dfi::logger("ui")->warn("mask view: {}", e.what());
    hover_->setText(tr("Cannot draw this mask: %1").arg(QString::fromStdString(e.what())));
    layout_.reset();
    plot_->setCells(0, 0, {}, true);
    differing_.clear();
    outlines_->data()->clear();
    return;
  }
  const bool resetView = !layout_ || layout_->rows() != layout->rows() || layout_->columns() != layout->columns();
  layout_ = layout;
  const bool training = scene.layout == MaskLayoutKind::Training;
  updateLegend(layout->isDiff());
  plot_->setCells(layout->rows(), layout->columns(),
                  [layout](std::int64_t r, std::int64_t c) { return static_cast<double>(layout->value(r, c)); },
                  resetView);
  outlineDifferences();

  QString title = QStringLiteral("%1 layout, %2").arg(training ? tr("training") : tr("inference"),
                                                      variantName(scene.spec.variant));
  if (scene.diffAgainst) title += tr(" vs %1").arg(variantName(*scene.diffAgainst));
  if (scene.spec.layer != analysis::LayerAttention::Sliding)
    title += tr(", full attention");
  else
    title += (scene.spec.windowFromAnchor ? tr(", sliding window %1 before the anchor") : tr(", sliding window %1"))
                 .arg(scene.spec.slidingWindow);
  title += analysis::isCausal(scene.spec) ? tr(", causal block") : tr(", bidirectional block");
  // No-break spaces: a title wrapped to fit keeps "T = 1024" on one line.
  title += training ? tr(", T\u00a0=\u00a0%1, %2\u00a0anchors, B\u00a0=\u00a0%3")
                          .arg(scene.sequenceLength)
                          .arg(scene.anchors.size())
                          .arg(scene.spec.blockSize)
                    : tr(", anchor\u00a0%1, B\u00a0=\u00a0%2").arg(scene.anchor).arg(scene.spec.blockSize);
  title_->setText(title);
  plot_->xAxis->setLabel(training ? tr("key: context positions 0..T-1 | blocks")
                                  : tr("key: context positions 0..anchor | block slots"));
  plot_->yAxis->setLabel(training ? tr("query row (block x B + slot)") : tr("query slot"));
  const std::int64_t contextColumns = layout->contextColumns();
  const int blockSize = scene.spec.blockSize;
  plot_->setColumnLabels([contextColumns, blockSize, training](std::int64_t column) {
    return keyLabel(column, contextColumns, blockSize, training);
  });
  const double x = static_cast<double>(contextColumns) - 0.5;
  boundary_->point1->setCoords(x, 0);
  boundary_->point2->setCoords(x, 1);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void MaskView::outlineDifferences() {
  differing_.clear();
  outlines_->data()->clear();
  const bool diff = layout_->isDiff();
  // One pass over the cells on the GUI thread: only for pictures a person can take in at once.
  if (diff && layout_->rows() * layout_->columns() <= kMaxDiffScan) {
    QVector<double> x, y;
    for (std::int64_t r = 0; r < layout_->rows() && static_cast<std::int64_t>(differing_.size()) <= kMaxOutlined; ++r)
      for (std::int64_t c = 0; c < layout_->columns(); ++c)
        if (layout_->value(r, c) == kDiffer) {
          differing_.emplace_back(r, c);
          x << static_cast<double>(c);
          y << static_cast<double>(r);
        }
    if (static_cast<std::int64_t>(differing_.size()) > kMaxOutlined) {
      differing_.clear();
    } else {
      outlines_->setData(x, y);
    }
  }
  zoomToDifferences_->setVisible(diff);
  zoomToDifferences_->setEnabled(!differing_.empty());
  showAll_->setVisible(diff);
}

bool MaskView::zoomToDifferences() {
  if (differing_.empty() || !layout_) return false;
  const MaskScene& scene = layout_->scene();
  const std::int64_t b = std::max(1, scene.spec.blockSize);
  // The first block with a difference (the inference layout has one block).
  const std::int64_t firstBlock = differing_.front().first / b;
  std::int64_t r0 = firstBlock * b, r1 = r0 + b - 1, c0 = layout_->columns(), c1 = 0;
  for (const auto& [r, c] : differing_)
    if (r >= r0 && r <= r1) {
      c0 = std::min(c0, c);
      c1 = std::max(c1, c);
    }
  // A block's width of context around them, so one sees what the differing keys sit beside.
  c0 = std::max<std::int64_t>(0, c0 - b);
  c1 = std::min(layout_->columns() - 1, c1 + b);
  plot_->xAxis->setRange(static_cast<double>(c0) - 0.5, static_cast<double>(c1) + 0.5);
  plot_->yAxis->setRange(static_cast<double>(r0) - 0.5, static_cast<double>(std::min(r1, layout_->rows() - 1)) + 0.5);
  plot_->replot(QCustomPlot::rpQueuedReplot);
  return true;
}

QString MaskView::tokenAt(std::int64_t position) const {
  if (!context_ || position < 0 || position >= static_cast<std::int64_t>(sequence_.tokens.size())) return {};
  return QStringLiteral(" '%1'").arg(context_->tokenText(sequence_.tokens[static_cast<std::size_t>(position)].id));
}

QString MaskView::blockKeyText(const MaskCellInfo& info) const {
  // Slot 0 holds the anchor token, the other slots the mask token the drafter fills in.
  QString text = tr("block slot %1 at position %2").arg(info.keySlot).arg(info.keyPosition);
  const MaskScene& scene = layout_->scene();
  const std::int64_t anchor = scene.layout == MaskLayoutKind::Training
                                  ? scene.anchors[static_cast<std::size_t>(info.keyBlock)]
                                  : scene.anchor;
  if (scene.layout == MaskLayoutKind::Training) text = tr("block %1, ").arg(info.keyBlock) + text;
  if (info.keySlot == 0) return text + tr(" (the anchor token%1)").arg(tokenAt(anchor));
  text += tr(" (mask");
  const bool drafted = context_ && step_ && controls_->followSelection() &&
                       scene.layout == MaskLayoutKind::Inference &&
                       info.keySlot - 1 < static_cast<int>(step_->draftTokens.size());
  if (drafted)
    text += tr(", drafted '%1'").arg(context_->tokenText(step_->draftTokens[static_cast<std::size_t>(info.keySlot - 1)]));
  return text + QLatin1Char(')');
}

QString MaskView::describeCell(std::int64_t row, std::int64_t column) const {
  if (!layout_ || row < 0 || column < 0 || row >= layout_->rows() || column >= layout_->columns()) return {};
  const MaskCellInfo info = layout_->describe(row, column);
  const MaskScene& scene = layout_->scene();
  QString query = tr("query: ");
  if (scene.layout == MaskLayoutKind::Training) query += tr("block %1, ").arg(info.block);
  query += tr("slot %1 at position %2").arg(info.querySlot).arg(info.queryPosition);
  const QString key = info.keyIsContext ? tr("key: context position %1%2").arg(info.keyPosition).arg(tokenAt(info.keyPosition))
                                        : tr("key: ") + blockKeyText(info);
  QString verdict = QStringLiteral("%1: %2").arg(variantName(scene.spec.variant), cellText(info.a));
  if (info.b) verdict += QStringLiteral("\n%1: %2").arg(variantName(*scene.diffAgainst), cellText(*info.b));
  return query + QLatin1Char('\n') + key + QLatin1Char('\n') + verdict;
}

QString MaskView::hoverText() const { return hover_->text(); }

void MaskView::onSessionOpened() {
  controls_->setSessionAvailable(true);
}

void MaskView::onSessionClosed() {
  step_.reset();
  sequence_ = {};
  responseAnchors_.clear();
  loadedResponse_ = {};
  controls_->setSessionAvailable(false);
  rebuild();
}

void MaskView::loadResponse(const Selection& selection) {
  const std::optional<session::PromptRecord> prompt = context_->prompt(selection.run, selection.prompt);
  const std::vector<session::StepRecord> steps = context_->steps(selection.run, selection.prompt);
  sequence_ = analysis::ResponseSequence::build(prompt ? prompt->promptTokens : std::vector<session::TokenId>{}, steps);
  responseAnchors_.clear();
  for (const session::StepRecord& s : steps) responseAnchors_.push_back(s.anchorPosition);
  loadedResponse_ = {selection.run, selection.prompt, 0};
  if (!responseAnchors_.empty())
    controls_->showResponseGeometry(responseLength(), static_cast<int>(responseAnchors_.size()));
}

void MaskView::onSelectionChanged(const Selection& selection) {
  // Selecting a run or a prompt keeps the block on show; only a step changes it.
  if (!context_ || !selection.step) return;
  step_ = context_->step(selection.step);
  if (!step_) return;
  const std::optional<session::RunRecord> run = context_->run(step_->runId);
  runBlockSize_ = run && run->blockSize > 0 ? run->blockSize : static_cast<int>(step_->draftTokens.size()) + 1;
  // The drafter's causality as the engine read its config (z-lab's is_causal, speculators'
  // sliding_window_non_causal).
  runCausal_.reset();
  runWindowFromAnchor_ = run && run->hypothesis == "window-from:anchor";  // the mask that ran
  if (run)
    if (const std::optional<modelspec::DrafterConfig> drafter = runDrafterConfig(*run)) runCausal_ = drafter->isCausal;
  if (loadedResponse_.run != step_->runId || loadedResponse_.prompt != step_->promptId)
    loadResponse({step_->runId, step_->promptId, 0});
  // The run's typed variant is the mask that ran; a step read without its run falls back on
  // the step's own record of it.
  std::optional<analysis::MaskVariant> variant =
      run ? std::optional(run->maskVariant) : parseEnum<session::MaskVariant>(step_->maskVariant);
  if (!variant) {
    // Once per name: every step of a run usually carries the same variant.
    if (unknownVariants_.insert(step_->maskVariant).second)
      dfi::logger("ui")->warn("mask variant '{}' (step {}) is unknown to this build; showing the reference",
                              step_->maskVariant, step_->stepId);
    variant = analysis::MaskVariant::Reference;
  }
  controls_->showBlockGeometry(step_->anchorPosition, runBlockSize_, *variant, run ? run->slidingWindow : 0);
  rebuild();
}

void MaskView::onStepsAppended(const std::vector<session::StepRecord>& steps) {
  for (const session::StepRecord& s : steps) {
    if (s.runId == loadedResponse_.run && s.promptId == loadedResponse_.prompt) {
      loadResponse(loadedResponse_);
      if (controls_->followSelection()) rebuild();
      return;
    }
  }
}

QWidget* MaskView::exportTarget() { return plot_; }

CsvTable MaskView::exportData() {
  if (!layout_) return {};
  if (layout_->rows() * layout_->columns() > kMaxCsvCells)
    throw UsageError("the mask has " + std::to_string(layout_->rows() * layout_->columns()) +
                     " cells, too many for a CSV table (at most " + std::to_string(kMaxCsvCells) + ")");
  const MaskScene& scene = layout_->scene();
  const bool training = scene.layout == MaskLayoutKind::Training;
  CsvTable table;
  table.header << (layout_->isDiff() ? tr("query \\ key (0 both masked, 1 both allowed, 2 differ)")
                                     : tr("query \\ key (1 allowed, 0 masked)"));
  for (std::int64_t c = 0; c < layout_->columns(); ++c)
    table.header << keyLabel(c, layout_->contextColumns(), scene.spec.blockSize, training);
  for (std::int64_t r = 0; r < layout_->rows(); ++r) {
    QStringList row{training ? QStringLiteral("b%1.s%2").arg(r / scene.spec.blockSize).arg(r % scene.spec.blockSize)
                             : QStringLiteral("s%1").arg(r)};
    for (std::int64_t c = 0; c < layout_->columns(); ++c) row << QString::number(layout_->value(r, c));
    table.rows.push_back(std::move(row));
  }
  return table;
}

QString MaskView::exportBaseName() const { return QStringLiteral("mask"); }

}  // namespace dfi::ui
