#include <gtest/gtest.h>

#include <optional>

#include "dfi/analysis/attention_mask.h"
#include "dfi/session/record_fields.h"

using namespace dfi::analysis;

namespace {

// docs/dflash.md 4.4 transcribed literally (SpecForge/speculators mask_mod), as the reference.
bool publishedTrainingRule(std::int64_t q, std::int64_t k, const std::vector<std::int64_t>& anchors,
                           std::int64_t T, int B) {
  const std::int64_t jq = q / B;
  const std::int64_t a = anchors[jq];
  const bool ctxOk = k < T && k < a;
  const bool blockOk = k >= T && (k - T) / B == jq;
  return ctxOk || blockOk;
}

}  // namespace

TEST(AttentionMask, ReferenceTrainingMaskIsThePublishedRule) {
  const std::vector<std::int64_t> anchors{0, 3, 9, 20};
  const std::int64_t T = 40, rows = 16;
  const MaskSpec spec{.blockSize = 4};
  // Every cell of the dense [context | all blocks] layout, as the published rule has it.
  for (std::int64_t q = 0; q < rows; ++q)
    for (std::int64_t k = 0; k < T + rows; ++k)
      ASSERT_EQ(trainingCell(spec, anchors, T, q, k).allowed, publishedTrainingRule(q, k, anchors, T, 4))
          << q << "," << k;
  // The per-block layout: each row's context columns, then its own block's 4 columns.
  const auto mask = trainingMaskPerBlock(spec, anchors, T);
  const std::int64_t cols = T + 4;
  ASSERT_EQ(mask.size(), static_cast<size_t>(rows * cols));
  for (std::int64_t q = 0; q < rows; ++q)
    for (std::int64_t k = 0; k < cols; ++k) {
      const std::int64_t denseKey = k < T ? k : T + (q / 4) * 4 + (k - T);
      ASSERT_EQ(mask[q * cols + k], publishedTrainingRule(q, denseKey, anchors, T, 4)) << q << "," << k;
    }
}

// The per-block layout leaves out only cells that no variant or layer type ever allows.
TEST(AttentionMask, NoVariantLetsABlockSeeAnotherBlock) {
  const std::vector<std::int64_t> anchors{2, 7, 13};
  const std::int64_t T = 24, rows = 12;
  for (MaskVariant variant : kAllMaskVariants)
    for (LayerAttention layer : {LayerAttention::Full, LayerAttention::Sliding}) {
      const MaskSpec spec{.variant = variant, .layer = layer, .blockSize = 4, .slidingWindow = 6};
      for (std::int64_t q = 0; q < rows; ++q)
        for (std::int64_t k = T; k < T + rows; ++k) {
          if ((k - T) / 4 != q / 4) {
            EXPECT_FALSE(trainingCell(spec, anchors, T, q, k).allowed) << q << "," << k;
          }
        }
    }
}

TEST(AttentionMask, AnchorVisibleDiffersExactlyAtTheAnchorColumn) {
  const std::vector<std::int64_t> anchors{5, 11};
  const std::int64_t T = 16;
  const MaskSpec ref{.blockSize = 4};
  const MaskSpec bug{.variant = MaskVariant::AnchorVisible, .blockSize = 4};
  for (std::int64_t q = 0; q < 8; ++q)
    for (std::int64_t k = 0; k < T + 8; ++k) {
      const auto a = trainingCell(ref, anchors, T, q, k), b = trainingCell(bug, anchors, T, q, k);
      const bool anchorColumn = k == anchors[q / 4];
      EXPECT_EQ(a.allowed != b.allowed, anchorColumn) << q << "," << k;
      if (anchorColumn) {
        EXPECT_EQ(b.reason, MaskReason::AnchorFeature);
        EXPECT_TRUE(b.allowed);
      }
    }
}

// The live loop's mask for one block must be the training mask's rows for that anchor, with
// the context truncated at the anchor: this is what makes teacher-forced acceptance comparable.
TEST(AttentionMask, InferenceLayoutIsTheTrainingRowsOfOneAnchor) {
  for (MaskVariant variant : kAllMaskVariants) {
    for (LayerAttention layer : {LayerAttention::Full, LayerAttention::Sliding}) {
      const MaskSpec spec{.variant = variant, .layer = layer, .blockSize = 4, .slidingWindow = 6};
      const std::vector<std::int64_t> anchors{2, 9};
      const std::int64_t T = 20;
      for (size_t j = 0; j < anchors.size(); ++j) {
        const std::int64_t a = anchors[j];
        const std::int64_t C = inferenceContextLength(variant, a);
        for (int q = 0; q < 4; ++q) {
          const std::int64_t row = static_cast<std::int64_t>(j) * 4 + q;
          for (std::int64_t k = 0; k < C; ++k)
            EXPECT_EQ(inferenceCell(spec, a, q, k).allowed, trainingCell(spec, anchors, T, row, k).allowed)
                << dfi::enumName(variant) << " ctx " << k;
          for (int s = 0; s < 4; ++s)
            EXPECT_EQ(inferenceCell(spec, a, q, C + s).allowed,
                      trainingCell(spec, anchors, T, row, T + static_cast<std::int64_t>(j) * 4 + s).allowed)
                << dfi::enumName(variant) << " slot " << s;
        }
      }
    }
  }
}

TEST(AttentionMask, VariantsChangeWhatTheyClaim) {
  const std::int64_t anchor = 10;
  auto cell = [&](MaskVariant v, int q, std::int64_t k) {
    return inferenceCell({.variant = v, .blockSize = 4}, anchor, q, k);
  };
  // Reference: all 10 context positions, whole block both ways.
  EXPECT_TRUE(cell(MaskVariant::Reference, 0, 9).allowed);
  EXPECT_TRUE(cell(MaskVariant::Reference, 0, 10 + 3).allowed);
  // Block-causal: slot 0 no longer sees slot 3.
  EXPECT_EQ(cell(MaskVariant::BlockCausal, 0, 10 + 3).reason, MaskReason::OwnBlockLater);
  EXPECT_TRUE(cell(MaskVariant::BlockCausal, 3, 10 + 0).allowed);
  // No-context: nothing before the block.
  EXPECT_EQ(cell(MaskVariant::NoContext, 2, 0).reason, MaskReason::ContextDisabled);
  // Positions+1 keeps the mask and shifts the positions.
  EXPECT_EQ(inferenceMask({.variant = MaskVariant::PositionsPlusOne, .blockSize = 4}, anchor),
            inferenceMask({.blockSize = 4}, anchor));
  EXPECT_EQ(blockSlotPosition(MaskVariant::PositionsPlusOne, anchor, 0), anchor + 1);
  EXPECT_EQ(blockSlotPosition(MaskVariant::Reference, anchor, 3), anchor + 3);
}

TEST(AttentionMask, SlidingLayersAreCausalWithALeftWindow) {
  // Query slot 2 sits at position 12; with W = 4 it sees positions 9..12 (p-W, p].
  const MaskSpec spec{.layer = LayerAttention::Sliding, .blockSize = 4, .slidingWindow = 4};
  const std::int64_t anchor = 10;
  EXPECT_EQ(inferenceCell(spec, anchor, 2, 8).reason, MaskReason::OutsideWindow);
  EXPECT_TRUE(inferenceCell(spec, anchor, 2, 9).allowed);
  EXPECT_TRUE(inferenceCell(spec, anchor, 2, 10 + 2).allowed);
  EXPECT_EQ(inferenceCell(spec, anchor, 2, 10 + 3).reason, MaskReason::OwnBlockLater);
}

TEST(AttentionMask, VariantNamesRoundTrip) {
  for (MaskVariant v : kAllMaskVariants) EXPECT_EQ(dfi::parseEnum<dfi::session::MaskVariant>(dfi::enumName(v)), v);
  EXPECT_FALSE(dfi::parseEnum<dfi::session::MaskVariant>("anchor_visible"));
}

// dflash 0.1.0's _attention_mask, transcribed: query and key indices over [context | block],
// causal keeps k <= q, a window keeps q - k < W and, when non-causal, k - q < W.
bool packageRule(std::int64_t q, std::int64_t k, bool causal, int window) {
  bool visible = true;
  if (causal) visible = visible && k <= q;
  if (window > 0) {
    visible = visible && q - k < window;
    if (!causal) visible = visible && k - q < window;
  }
  return visible;
}

// vLLM's four drafter attention styles and is_causal on full layers: every inference cell as
// the package's rule has it (context 0..anchor-1, the block at anchor..anchor+B-1).
TEST(AttentionMask, EveryAttentionStyleIsThePackagesRule) {
  const std::int64_t anchor = 9;
  struct Style {
    LayerAttention layer;
    std::optional<bool> causal;
    bool expectCausal;
  };
  for (const Style& s : {Style{LayerAttention::Full, std::nullopt, false}, Style{LayerAttention::Sliding, std::nullopt, true},
                         Style{LayerAttention::Sliding, false, false}, Style{LayerAttention::Sliding, true, true},
                         Style{LayerAttention::Full, true, true}, Style{LayerAttention::Full, false, false}}) {
    const MaskSpec spec{.layer = s.layer, .blockSize = 6, .slidingWindow = s.layer == LayerAttention::Sliding ? 3 : 0,
                        .causal = s.causal};
    EXPECT_EQ(isCausal(spec), s.expectCausal);
    for (int q = 0; q < spec.blockSize; ++q)
      for (std::int64_t k = 0; k < anchor + spec.blockSize; ++k)
        ASSERT_EQ(inferenceCell(spec, anchor, q, k).allowed, packageRule(anchor + q, k, s.expectCausal, spec.slidingWindow))
            << "causal " << s.expectCausal << " sliding " << (s.layer == LayerAttention::Sliding) << " q " << q << " k " << k;
  }
  // The symmetric window cuts later slots of the block, named as outside the window.
  const MaskSpec symmetric{.layer = LayerAttention::Sliding, .blockSize = 6, .slidingWindow = 3, .causal = false};
  EXPECT_EQ(inferenceCell(symmetric, anchor, 0, anchor + 3).reason, MaskReason::OutsideWindow);
  EXPECT_TRUE(inferenceCell(symmetric, anchor, 0, anchor + 2).allowed);
}

// speculators counts the window from the anchor (its attention.py: a context key is seen when
// anchor - W <= key < anchor, by every slot; the block is not windowed), training layout and
// inference alike.
TEST(AttentionMask, WindowFromTheAnchorIsSpeculatorsRule) {
  const std::int64_t anchor = 10;
  for (const bool causal : {false, true}) {
    const MaskSpec spec{.layer = LayerAttention::Sliding, .blockSize = 4, .slidingWindow = 3,
                        .windowFromAnchor = true, .causal = causal};
    for (int q = 0; q < spec.blockSize; ++q) {
      for (std::int64_t k = 0; k < anchor; ++k) {
        const MaskCell cell = inferenceCell(spec, anchor, q, k);
        EXPECT_EQ(cell.allowed, k >= anchor - 3) << "slot " << q << " key " << k;
        if (!cell.allowed) EXPECT_EQ(cell.reason, MaskReason::OutsideWindow);
      }
      for (int key = 0; key < spec.blockSize; ++key)
        EXPECT_EQ(inferenceCell(spec, anchor, q, anchor + key).allowed, !causal || key <= q);
    }
    const std::vector<std::int64_t> anchors{4, anchor};
    for (std::int64_t row = 4; row < 8; ++row)  // the second block: anchor 10
      for (std::int64_t k = 0; k < 14; ++k)
        EXPECT_EQ(trainingCell(spec, anchors, 14, row, k).allowed, k >= anchor - 3 && k < anchor);
  }
  // Counted back from each slot instead (dflash 0.1.0), slot 2 at position 12 sees no context.
  const MaskSpec fromSlot{.layer = LayerAttention::Sliding, .blockSize = 4, .slidingWindow = 3};
  EXPECT_FALSE(inferenceCell(fromSlot, anchor, 2, anchor - 1).allowed);
}
