#include "panels/mask_controls.h"
#include "dfi/session/record_fields.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSignalBlocker>
#include <QSpinBox>

namespace dfi::ui {
namespace {

QComboBox* variantCombo() {
  auto* combo = new QComboBox;
  for (analysis::MaskVariant v : analysis::kAllMaskVariants)
    combo->addItem(QString::fromUtf8(enumName(v).data()), static_cast<int>(v));
  return combo;
}

QSpinBox* spin(int min, int max, int value, const QString& tip) {
  auto* box = new QSpinBox;
  box->setRange(min, max);
  box->setValue(value);
  box->setToolTip(tip);
  box->setKeyboardTracking(false);  // one change per edit, not one per digit typed
  return box;
}

}  // namespace

MaskControls::MaskControls(QWidget* parent)
    : QWidget(parent),
      layout_(new QComboBox),
      variant_(variantCombo()),
      diff_(new QCheckBox(tr("diff against"))),
      diffVariant_(variantCombo()),
      layer_(new QComboBox),
      window_(spin(1, 1 << 20, 2048, tr("Sliding window W: a query at p sees keys in (p-W, p]"))),
      blockSize_(spin(1, 256, 16, tr("Block size B: the anchor and B-1 draft slots"))),
      anchor_(spin(0, 1 << 20, 24, tr("Sequence position of the anchor token"))),
      sequenceLength_(spin(1, 1 << 20, 64, tr("Training sequence length T"))),
      anchorCount_(spin(1, 4096, 3, tr("Number of anchors N (evenly spaced over the sequence)"))),
      follow_(new QCheckBox(tr("follow the selected block"))) {
  layout_->addItem(tr("inference"), static_cast<int>(MaskLayoutKind::Inference));
  layout_->addItem(tr("training"), static_cast<int>(MaskLayoutKind::Training));
  layer_->addItem(tr("full attention"), static_cast<int>(analysis::LayerAttention::Full));
  layer_->addItem(tr("sliding window"), static_cast<int>(analysis::LayerAttention::Sliding));
  diffVariant_->setCurrentIndex(1);
  follow_->setChecked(true);
  follow_->setEnabled(false);

  auto* form = new QFormLayout(this);
  form->setContentsMargins(4, 4, 4, 4);
  form->addRow(tr("Layout"), layout_);
  form->addRow(tr("Variant"), variant_);
  auto* diffRow = new QHBoxLayout;
  diffRow->addWidget(diff_);
  diffRow->addWidget(diffVariant_, 1);
  form->addRow(diffRow);
  form->addRow(tr("Layer"), layer_);
  form->addRow(tr("Window"), window_);
  form->addRow(tr("Block size"), blockSize_);
  form->addRow(tr("Anchor"), anchor_);
  form->addRow(tr("Sequence length"), sequenceLength_);
  form->addRow(tr("Anchors"), anchorCount_);
  form->addRow(follow_);

  for (QComboBox* c : {layout_, variant_, diffVariant_, layer_})
    connect(c, &QComboBox::currentIndexChanged, this, [this] { updateEnabled(); emit changed(); });
  for (QSpinBox* s : {window_, blockSize_, anchor_, sequenceLength_, anchorCount_})
    connect(s, &QSpinBox::valueChanged, this, &MaskControls::changed);
  for (QCheckBox* c : {diff_, follow_})
    connect(c, &QCheckBox::toggled, this, [this] { updateEnabled(); emit changed(); });
  updateEnabled();
}

MaskScene MaskControls::scene() const {
  MaskScene scene;
  scene.layout = static_cast<MaskLayoutKind>(layout_->currentData().toInt());
  scene.spec.variant = static_cast<analysis::MaskVariant>(variant_->currentData().toInt());
  scene.spec.layer = static_cast<analysis::LayerAttention>(layer_->currentData().toInt());
  scene.spec.blockSize = blockSize_->value();
  scene.spec.slidingWindow = scene.spec.layer == analysis::LayerAttention::Sliding ? window_->value() : 0;
  if (diff_->isChecked())
    scene.diffAgainst = static_cast<analysis::MaskVariant>(diffVariant_->currentData().toInt());
  scene.anchor = anchor_->value();
  scene.sequenceLength = sequenceLength_->value();
  scene.anchors = evenlySpacedAnchors(scene.sequenceLength, scene.spec.blockSize, anchorCount_->value());
  return scene;
}

bool MaskControls::followSelection() const { return follow_->isEnabled() && follow_->isChecked(); }

void MaskControls::setSessionAvailable(bool available) {
  follow_->setEnabled(available);
  updateEnabled();
}

void MaskControls::showBlockGeometry(std::int64_t anchor, int blockSize, analysis::MaskVariant variant,
                                     int slidingWindow) {
  const QSignalBlocker a(anchor_), b(blockSize_), v(variant_), w(window_);
  anchor_->setValue(static_cast<int>(anchor));
  blockSize_->setValue(blockSize);
  variant_->setCurrentIndex(variant_->findData(static_cast<int>(variant)));
  runWindow_ = slidingWindow;
  if (slidingWindow > 0) window_->setValue(slidingWindow);
  updateEnabled();
}

void MaskControls::showResponseGeometry(std::int64_t sequenceLength, int anchors) {
  const QSignalBlocker t(sequenceLength_), n(anchorCount_);
  sequenceLength_->setValue(static_cast<int>(sequenceLength));
  anchorCount_->setValue(anchors);
}

void MaskControls::setMaskLayout(MaskLayoutKind layout) {
  layout_->setCurrentIndex(layout_->findData(static_cast<int>(layout)));
}

void MaskControls::setVariant(analysis::MaskVariant variant) {
  variant_->setCurrentIndex(variant_->findData(static_cast<int>(variant)));
}

void MaskControls::setDiffAgainst(std::optional<analysis::MaskVariant> variant) {
  if (variant) diffVariant_->setCurrentIndex(diffVariant_->findData(static_cast<int>(*variant)));
  diff_->setChecked(variant.has_value());
}

void MaskControls::setLayer(analysis::LayerAttention layer, int window) {
  const QSignalBlocker block(window_);
  window_->setValue(window);
  layer_->setCurrentIndex(layer_->findData(static_cast<int>(layer)));
  emit changed();
}

void MaskControls::setInferenceGeometry(std::int64_t anchor, int blockSize) {
  const QSignalBlocker a(anchor_), b(blockSize_);
  anchor_->setValue(static_cast<int>(anchor));
  blockSize_->setValue(blockSize);
  emit changed();
}

void MaskControls::setTrainingGeometry(std::int64_t sequenceLength, int anchors) {
  const QSignalBlocker t(sequenceLength_), n(anchorCount_);
  sequenceLength_->setValue(static_cast<int>(sequenceLength));
  anchorCount_->setValue(anchors);
  emit changed();
}

void MaskControls::updateEnabled() {
  const bool training = layout_->currentData().toInt() == static_cast<int>(MaskLayoutKind::Training);
  const bool fromSession = followSelection();
  diffVariant_->setEnabled(diff_->isChecked());
  // A run whose drafter has sliding layers fixes W too: the picture is the mask that ran.
  window_->setEnabled(layer_->currentData().toInt() == static_cast<int>(analysis::LayerAttention::Sliding) &&
                      !(fromSession && runWindow_ > 0));
  // The selected block fixes the anchor, B and the variant it ran with; a training picture
  // from a session uses the response's length and its step anchors.
  anchor_->setEnabled(!fromSession && !training);
  blockSize_->setEnabled(!fromSession);
  sequenceLength_->setEnabled(!fromSession && training);
  anchorCount_->setEnabled(!fromSession && training);
}

}  // namespace dfi::ui
