#pragma once
// The form that chooses which mask the mask view draws: layout, variant (and a second one
// to diff against), layer type and window, block size, and the anchor / sequence geometry.
// Without a session the geometry comes from the spin boxes (the mask explainer); with one,
// "follow the selected block" takes it from the selected step.

#include <QWidget>

#include "models/mask_layout.h"

class QCheckBox;
class QComboBox;
class QSpinBox;
class QLabel;

namespace dfi::ui {

class MaskControls : public QWidget {
  Q_OBJECT
 public:
  explicit MaskControls(QWidget* parent = nullptr);

  // The scene the spin boxes describe (anchors of the training layout evenly spaced).
  MaskScene scene() const;
  bool followSelection() const;
  void setSessionAvailable(bool available);
  // Shows the geometry of the selected block without emitting changes for it.
  // The recorded block's geometry as its run recorded it; slidingWindow 0: the run's drafter
  // has no sliding layers (the window stays the user's, for exploring).
  void showBlockGeometry(std::int64_t anchor, int blockSize, analysis::MaskVariant variant, int slidingWindow);
  // Shows the response's length and number of anchors (the session's training picture).
  void showResponseGeometry(std::int64_t sequenceLength, int anchors);

  // For tests and scripted use.
  void setMaskLayout(MaskLayoutKind layout);
  void setVariant(analysis::MaskVariant variant);
  void setDiffAgainst(std::optional<analysis::MaskVariant> variant);
  void setLayer(analysis::LayerAttention layer, int window);
  void setInferenceGeometry(std::int64_t anchor, int blockSize);
  void setTrainingGeometry(std::int64_t sequenceLength, int anchors);

 signals:
  void changed();

 private:
  void updateEnabled();

  QComboBox* layout_;
  QComboBox* variant_;
  QCheckBox* diff_;
  QComboBox* diffVariant_;
  QComboBox* layer_;
  QSpinBox* window_;
  QSpinBox* blockSize_;
  QSpinBox* anchor_;
  QSpinBox* sequenceLength_;
  QSpinBox* anchorCount_;
  QCheckBox* follow_;
  int runWindow_ = 0;  // the selected block's run's sliding window; 0: none
};

}  // namespace dfi::ui
