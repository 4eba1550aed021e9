#pragma once
// The drafter's attention masks, defined once for the engine (which turns them into tensors)
// and for the GUI (which draws them), so the picture is always the mask that ran.
//
// Two layouts (docs/dflash.md 2.3 and 4.4):
//  - inference: the B slots of one block query [context | block]; context = the committed
//    positions whose target features the drafter has (0 .. anchor-1), block = B slots at
//    positions anchor .. anchor+B-1.
//  - training: N anchors x B slots query [context (T positions of the sequence) | N blocks].
// A variant changes the rule; `reference` is the published one, the others are the known
// train/eval mismatches (docs/dflash.md 4.6), so their cost can be measured and seen.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::analysis {

// The variants are part of the record vocabulary (a run records which one it ran with); their
// names are EnumNames<MaskVariant> in dfi/session/record_fields.h.
using session::MaskVariant;
using session::kAllMaskVariants;


enum class LayerAttention { Full, Sliding };

struct MaskSpec {
  MaskVariant variant = MaskVariant::Reference;
  LayerAttention layer = LayerAttention::Full;
  int blockSize = 16;
  // Sliding layers only: a query at position p sees keys at positions in (p - W, p], and, when
  // the layer is non-causal, also in [p, p + W) (a symmetric window; dflash 0.1.0, and SpecForge's
  // training mask: "the current draft token occupies one slot in the window").
  int slidingWindow = 0;
  // speculators 0.9.0 trains with the window counted from the anchor instead
  // (models/dflash/attention.py): every slot of a block sees the W context positions
  // [anchor - W, anchor) and its own block as the causality allows, unwindowed. Slot i so sees
  // i + 1 context positions more than the serving rule above gives it (diagnose's
  // window-from:anchor measures what serving costs such a drafter).
  bool windowFromAnchor = false;
  // Whether a block slot sees only the slots up to itself: the drafter's is_causal. Absent:
  // the per-type default of dflash 0.1.0, vLLM and SGLang, causal exactly for sliding layers.
  // With the layer kinds this gives vLLM's four drafter attention styles: all non-causal full,
  // causal sliding + non-causal full, all sliding non-causal, all sliding causal.
  std::optional<bool> causal;
};

// The layer's causality under `spec` (MaskSpec::causal, else causal exactly when sliding).
bool isCausal(const MaskSpec& spec);

// Position of block slot `slot` for a block anchored at `anchor` under `variant`.
std::int64_t blockSlotPosition(MaskVariant variant, std::int64_t anchor, int slot);

// Why a (query, key) cell is or is not allowed; the GUI shows this on hover.
enum class MaskReason {
  ContextBeforeAnchor,  // allowed: committed context strictly before the anchor
  AnchorFeature,        // the anchor's own target feature (allowed only in anchor-visible)
  ContextAfterAnchor,   // not allowed: the future of the anchor
  OwnBlock,             // allowed: a slot of the query's own block
  OwnBlockLater,        // not allowed in causal layouts: a later slot of the own block
  OtherBlock,           // not allowed: another anchor's block (training layout)
  OutsideWindow,        // not allowed: beyond the sliding window
  ContextDisabled,      // not allowed: the no-context variant
};
std::string_view maskReasonText(MaskReason reason);

struct MaskCell {
  bool allowed;
  MaskReason reason;
};

// Inference layout: query slot q (0..B-1) of the block anchored at `anchor`, key index k in
// [0, contextLength + B) where contextLength = inferenceContextLength(variant, anchor).
std::int64_t inferenceContextLength(MaskVariant variant, std::int64_t anchor);
MaskCell inferenceCell(const MaskSpec& spec, std::int64_t anchor, int querySlot, std::int64_t key);

// Training layout: query row r (block r / B, slot r % B) against key k in [0, T + N*B).
MaskCell trainingCell(const MaskSpec& spec, std::span<const std::int64_t> anchors,
                      std::int64_t sequenceLength, std::int64_t queryRow, std::int64_t key);

// Dense row-major masks (1 = allowed) for the engine and for small displays; the GUI samples
// large ones cell by cell instead.
std::vector<std::uint8_t> inferenceMask(const MaskSpec& spec, std::int64_t anchor);
// The training layout without the cells that are never allowed: each query row over the T
// context keys and the B keys of its own block, [N*B, T + B]. Another block's keys are always
// MaskReason::OtherBlock, so attending block by block over [context | own block] is the whole
// training attention with (T + B) / (T + N*B) of the work.
std::vector<std::uint8_t> trainingMaskPerBlock(const MaskSpec& spec, std::span<const std::int64_t> anchors,
                                               std::int64_t sequenceLength);

}  // namespace dfi::analysis
