#include "models/mask_layout.h"

#include <algorithm>
#include <string>

#include "dfi/base/error.h"

namespace dfi::ui {

using analysis::MaskCell;
using analysis::MaskReason;
using analysis::MaskSpec;

MaskLayout::MaskLayout(MaskScene scene) : scene_(std::move(scene)) {
  const MaskSpec& spec = scene_.spec;
  if (spec.blockSize < 1) throw UsageError("the block size must be at least 1, not " + std::to_string(spec.blockSize));
  specB_ = spec;
  if (scene_.diffAgainst) specB_.variant = *scene_.diffAgainst;
  if (scene_.layout == MaskLayoutKind::Inference) {
    if (scene_.anchor < 0) throw UsageError("the anchor position must not be negative");
    rows_ = spec.blockSize;
    contextColumns_ = scene_.anchor + 1;
  } else {
    if (scene_.anchors.empty()) throw UsageError("the training layout needs at least one anchor");
    for (std::int64_t a : scene_.anchors)
      if (a < 0 || a >= scene_.sequenceLength)
        throw UsageError("anchor " + std::to_string(a) + " is outside the sequence of " +
                         std::to_string(scene_.sequenceLength) + " positions");
    rows_ = static_cast<std::int64_t>(scene_.anchors.size()) * spec.blockSize;
    contextColumns_ = scene_.sequenceLength;
  }
  columns_ = contextColumns_ + (scene_.layout == MaskLayoutKind::Inference ? spec.blockSize : rows_);
  if (rows_ > kMaxExtent || columns_ > kMaxExtent)
    throw UsageError("the mask has " + std::to_string(rows_) + " x " + std::to_string(columns_) +
                     " cells; at most " + std::to_string(kMaxExtent) + " per side can be drawn");
}

MaskCell MaskLayout::cell(const MaskSpec& spec, std::int64_t row, std::int64_t column) const {
  if (scene_.layout == MaskLayoutKind::Training)
    return analysis::trainingCell(spec, scene_.anchors, scene_.sequenceLength, row, column);
  const int slot = static_cast<int>(row);
  const std::int64_t keys = analysis::inferenceContextLength(spec.variant, scene_.anchor);
  if (column < contextColumns_) {
    // The anchor's column exists for every variant; where it is not a key it is masked for
    // the reason that it is the anchor's own feature.
    if (column >= keys) return {false, MaskReason::AnchorFeature};
    return analysis::inferenceCell(spec, scene_.anchor, slot, column);
  }
  return analysis::inferenceCell(spec, scene_.anchor, slot, keys + (column - contextColumns_));
}

int MaskLayout::value(std::int64_t row, std::int64_t column) const {
  const bool a = cell(scene_.spec, row, column).allowed;
  if (!isDiff()) return a ? kAllowed : kMasked;
  const bool b = cell(specB_, row, column).allowed;
  if (a != b) return kDiffer;
  return a ? kBothAllowed : kBothMasked;
}

MaskCellInfo MaskLayout::describe(std::int64_t row, std::int64_t column) const {
  MaskCellInfo info;
  const int b = scene_.spec.blockSize;
  info.block = scene_.layout == MaskLayoutKind::Training ? row / b : 0;
  info.querySlot = static_cast<int>(row % b);
  const std::int64_t anchor =
      scene_.layout == MaskLayoutKind::Training ? scene_.anchors[static_cast<std::size_t>(info.block)] : scene_.anchor;
  info.queryPosition = analysis::blockSlotPosition(scene_.spec.variant, anchor, info.querySlot);
  info.keyIsContext = column < contextColumns_;
  if (info.keyIsContext) {
    info.keyPosition = column;
  } else {
    const std::int64_t blockKey = column - contextColumns_;
    info.keyBlock = scene_.layout == MaskLayoutKind::Training ? blockKey / b : 0;
    info.keySlot = static_cast<int>(blockKey % b);
    const std::int64_t keyAnchor = scene_.layout == MaskLayoutKind::Training
                                       ? scene_.anchors[static_cast<std::size_t>(info.keyBlock)]
                                       : scene_.anchor;
    info.keyPosition = analysis::blockSlotPosition(scene_.spec.variant, keyAnchor, info.keySlot);
  }
  info.a = cell(scene_.spec, row, column);
  if (isDiff()) info.b = cell(specB_, row, column);
  return info;
}

std::vector<std::int64_t> evenlySpacedAnchors(std::int64_t sequenceLength, int blockSize, int count) {
  const std::int64_t last = std::max<std::int64_t>(0, sequenceLength - blockSize);
  count = static_cast<int>(std::clamp<std::int64_t>(count, 1, last + 1));
  std::vector<std::int64_t> anchors;
  for (int j = 0; j < count; ++j) anchors.push_back(count == 1 ? 0 : last * j / (count - 1));
  return anchors;
}

}  // namespace dfi::ui
