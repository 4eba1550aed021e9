#include "dfi/analysis/attention_mask.h"

#include <array>

namespace dfi::analysis {
namespace {

bool causalWithinBlock(const MaskSpec& spec) {
  return spec.variant == MaskVariant::BlockCausal || isCausal(spec);
}

bool windowed(const MaskSpec& spec) { return spec.layer == LayerAttention::Sliding && spec.slidingWindow > 0; }

bool outsideWindow(const MaskSpec& spec, std::int64_t queryPosition, std::int64_t keyPosition) {
  if (!windowed(spec)) return false;
  if (keyPosition <= queryPosition - spec.slidingWindow) return true;
  return !isCausal(spec) && keyPosition >= queryPosition + spec.slidingWindow;  // symmetric
}

// A context key at `position` for a block anchored at `anchor`.
MaskCell contextCell(const MaskSpec& spec, std::int64_t anchor, std::int64_t queryPosition,
                     std::int64_t position) {
  if (spec.variant == MaskVariant::NoContext) return {false, MaskReason::ContextDisabled};
  if (position > anchor) return {false, MaskReason::ContextAfterAnchor};
  const bool isAnchor = position == anchor;
  if (isAnchor && spec.variant != MaskVariant::AnchorVisible) return {false, MaskReason::AnchorFeature};
  const bool outside = spec.windowFromAnchor ? windowed(spec) && position < anchor - spec.slidingWindow
                                             : outsideWindow(spec, queryPosition, position);
  if (outside) return {false, MaskReason::OutsideWindow};
  return {true, isAnchor ? MaskReason::AnchorFeature : MaskReason::ContextBeforeAnchor};
}

// A key in the query's own block.
MaskCell ownBlockCell(const MaskSpec& spec, std::int64_t anchor, int querySlot, int keySlot) {
  if (causalWithinBlock(spec) && keySlot > querySlot) return {false, MaskReason::OwnBlockLater};
  if (!spec.windowFromAnchor && outsideWindow(spec, blockSlotPosition(spec.variant, anchor, querySlot),
                    blockSlotPosition(spec.variant, anchor, keySlot)))
    return {false, MaskReason::OutsideWindow};
  return {true, MaskReason::OwnBlock};
}

}  // namespace

bool isCausal(const MaskSpec& spec) { return spec.causal.value_or(spec.layer == LayerAttention::Sliding); }

std::string_view maskReasonText(MaskReason reason) {
  switch (reason) {
    case MaskReason::ContextBeforeAnchor: return "context before the anchor";
    case MaskReason::AnchorFeature: return "the anchor's own target feature";
    case MaskReason::ContextAfterAnchor: return "context after the anchor (the future)";
    case MaskReason::OwnBlock: return "a slot of the query's own block";
    case MaskReason::OwnBlockLater: return "a later slot of the own block (causal)";
    case MaskReason::OtherBlock: return "another anchor's block";
    case MaskReason::OutsideWindow: return "outside the sliding window";
    case MaskReason::ContextDisabled: return "context disabled (no-context variant)";
  }
  return "";
}

std::int64_t blockSlotPosition(MaskVariant variant, std::int64_t anchor, int slot) {
  return anchor + slot + (variant == MaskVariant::PositionsPlusOne ? 1 : 0);
}

std::int64_t inferenceContextLength(MaskVariant variant, std::int64_t anchor) {
  return variant == MaskVariant::AnchorVisible ? anchor + 1 : anchor;
}

MaskCell inferenceCell(const MaskSpec& spec, std::int64_t anchor, int querySlot, std::int64_t key) {
  const std::int64_t contextLength = inferenceContextLength(spec.variant, anchor);
  if (key < contextLength)
    return contextCell(spec, anchor, blockSlotPosition(spec.variant, anchor, querySlot), key);
  return ownBlockCell(spec, anchor, querySlot, static_cast<int>(key - contextLength));
}

MaskCell trainingCell(const MaskSpec& spec, std::span<const std::int64_t> anchors,
                      std::int64_t sequenceLength, std::int64_t queryRow, std::int64_t key) {
  const std::int64_t block = queryRow / spec.blockSize;
  const int querySlot = static_cast<int>(queryRow % spec.blockSize);
  const std::int64_t anchor = anchors[static_cast<std::size_t>(block)];
  if (key < sequenceLength)
    return contextCell(spec, anchor, blockSlotPosition(spec.variant, anchor, querySlot), key);
  const std::int64_t keyBlock = (key - sequenceLength) / spec.blockSize;
  if (keyBlock != block) return {false, MaskReason::OtherBlock};
  return ownBlockCell(spec, anchor, querySlot,
                      static_cast<int>((key - sequenceLength) % spec.blockSize));
}

std::vector<std::uint8_t> inferenceMask(const MaskSpec& spec, std::int64_t anchor) {
  const std::int64_t columns = inferenceContextLength(spec.variant, anchor) + spec.blockSize;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(spec.blockSize * columns));
  for (int q = 0; q < spec.blockSize; ++q)
    for (std::int64_t k = 0; k < columns; ++k)
      mask[static_cast<std::size_t>(q * columns + k)] = inferenceCell(spec, anchor, q, k).allowed;
  return mask;
}

std::vector<std::uint8_t> trainingMaskPerBlock(const MaskSpec& spec, std::span<const std::int64_t> anchors,
                                               std::int64_t sequenceLength) {
  const std::int64_t rows = static_cast<std::int64_t>(anchors.size()) * spec.blockSize;
  const std::int64_t columns = sequenceLength + spec.blockSize;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(rows * columns));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t ownBlockStart = sequenceLength + (r / spec.blockSize) * spec.blockSize;
    for (std::int64_t k = 0; k < columns; ++k) {
      const std::int64_t key = k < sequenceLength ? k : ownBlockStart + (k - sequenceLength);
      mask[static_cast<std::size_t>(r * columns + k)] = trainingCell(spec, anchors, sequenceLength, r, key).allowed;
    }
  }
  return mask;
}

}  // namespace dfi::analysis
