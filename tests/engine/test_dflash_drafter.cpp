// The drafter's two layouts against each other: the teacher-forced batched forward (training
// anchor-block mask) must equal one live draft() call per anchor, for every mask variant, on
// a drafter with GQA, YaRN and sliding layers. This equivalence is what makes teacher-forced
// acceptance equal live acceptance.

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "dfi/base/error.h"
#include "dflash_test_support.h"
#include "models/grouped_conv.h"
#include "dfi/session/record_fields.h"

namespace dfi::engine {
namespace {

using analysis::MaskVariant;
using testing::maxAbsDiff;

class DrafterLayouts : public ::testing::Test {
 protected:
  static constexpr std::int64_t kLength = 20;
  const modelspec::DrafterConfig config = testing::smallDrafterConfig();
  const DFlashDrafter drafter{config, testing::randomDrafterWeights(config, 32, 7),
                              testing::randomTargetHead(64, 32, 8)};
  const at::Tensor features = at::randn({kLength, 64});
  const at::Tensor tokens = at::randint(0, 60, {kLength}, at::kLong);
  const std::vector<std::int64_t> anchors{0, 2, 7, 13, 19};

  // The live call: a fresh cache, context = every feature the variant lets the block see.
  at::Tensor liveDraft(std::int64_t anchor, MaskVariant variant) const {
    DrafterKvCache cache = drafter.newCache();
    const std::int64_t context = analysis::inferenceContextLength(variant, anchor);
    return drafter.draft(cache, features.narrow(0, 0, context), tokens[anchor].item<std::int64_t>(),
                         anchor, variant);
  }
};

// A test name per mask variant ("anchor_visible").
std::string variantTestName(const ::testing::TestParamInfo<MaskVariant>& info) {
  std::string name(dfi::enumName(info.param));
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

class DrafterVariants : public DrafterLayouts, public ::testing::WithParamInterface<MaskVariant> {};

TEST_P(DrafterVariants, TeacherForcedEqualsOneLiveDraftPerAnchor) {
  const MaskVariant variant = GetParam();
  const at::Tensor batched = drafter.teacherForced(features, tokens, anchors, variant);
  ASSERT_EQ(batched.sizes().vec(), (std::vector<std::int64_t>{5, 3, 64}));
  for (std::size_t j = 0; j < anchors.size(); ++j) {
    const at::Tensor live = liveDraft(anchors[j], variant);
    EXPECT_LE(maxAbsDiff(batched[static_cast<std::int64_t>(j)], live), 1e-5)
        << "anchor " << anchors[j] << " variant " << dfi::enumName(variant);
  }
  if (variant != MaskVariant::Reference) {
    // Every variant changes what the drafter computes (otherwise the case above proves little).
    const at::Tensor reference = drafter.teacherForced(features, tokens, anchors);
    EXPECT_GT(maxAbsDiff(batched, reference), 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, DrafterVariants, ::testing::ValuesIn(analysis::kAllMaskVariants),
                         variantTestName);

// draftsUntilRejected, the diagnosis's acceptance-only forward, against the argmax of the full
// teacher-forced logits: the same drafts through each block's first rejection, -1 after it,
// for every mask variant (the last layer is a sliding one), for several feature sets in one
// forward, in one chunk of anchors or in several.
class DraftsUntilRejected : public ::testing::TestWithParam<MaskVariant> {};

TEST_P(DraftsUntilRejected, EqualTheFullForwardThroughTheFirstRejection) {
  const MaskVariant variant = GetParam();
  modelspec::DrafterConfig config = testing::smallDrafterConfig();
  config.blockSize = 10;  // nine slots: rounds over slots 1, 2-3, 4-7 and 8-9
  const DFlashDrafter drafter{config, testing::randomDrafterWeights(config, 32, 11), testing::randomTargetHead(64, 32, 12)};
  const at::Tensor features = at::randn({20, 64});
  const at::Tensor tokens = at::randint(0, 60, {20}, at::kLong);
  const std::vector<std::int64_t> anchors{0, 3, 7, 12, 15, 19};
  // Three feature sets: the first, the first nudged (mostly the same drafts), another.
  const std::vector<at::Tensor> sets{features, features + 1e-3 * at::randn({20, 64}), at::randn({20, 64})};
  std::vector<at::Tensor> full;
  for (const at::Tensor& set : sets) full.push_back(drafter.teacherForced(set, tokens, anchors, variant).argmax(-1));
  // Expected tokens that reject the first set's block j at slot firstRejected[j] (9: never;
  // the fourth block's run into the sequence's end, -1, at slot 5).
  const std::vector<int> firstRejected{0, 9, 1, 5, 3, 8};
  at::Tensor expected = full[0].clone();
  for (std::size_t j = 0; j < anchors.size(); ++j) {
    const auto row = static_cast<std::int64_t>(j);
    if (j == 3) expected[row].narrow(0, 5, 4).fill_(-1);
    else if (firstRejected[j] < 9) expected[row][firstRejected[j]] = (full[0][row][firstRejected[j]] + 1) % 64;
  }
  for (std::int64_t perForward : {0, 4}) {
    const at::Tensor drafts = drafter.draftsUntilRejected(sets, tokens, anchors, variant, expected, perForward);
    ASSERT_EQ(drafts.sizes().vec(), (std::vector<std::int64_t>{3, 6, 9}));
    int deep = 0;
    for (std::size_t g = 0; g < sets.size(); ++g)
      for (std::size_t j = 0; j < anchors.size(); ++j) {
        const at::Tensor mine = full[g][static_cast<std::int64_t>(j)], want = expected[static_cast<std::int64_t>(j)];
        int computed = 1;
        while (computed < 9 && mine[computed - 1].item<std::int64_t>() == want[computed - 1].item<std::int64_t>()) ++computed;
        if (g == 0) {
          EXPECT_EQ(computed, std::min(firstRejected[j] + 1, 9)) << "block " << j;
        }
        deep += computed > 3;
        const at::Tensor got = drafts[static_cast<std::int64_t>(g)][static_cast<std::int64_t>(j)];
        EXPECT_TRUE(got.narrow(0, 0, computed).equal(mine.narrow(0, 0, computed)))
            << "set " << g << " block " << j << " " << dfi::enumName(variant);
        EXPECT_TRUE((got.narrow(0, computed, 9 - computed) == -1).all().item<bool>()) << "set " << g << " block " << j;
      }
    EXPECT_GE(deep, 6) << "too few blocks reach the later rounds to test them";
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, DraftsUntilRejected, ::testing::ValuesIn(analysis::kAllMaskVariants),
                         variantTestName);

TEST_F(DrafterLayouts, AnchorsInSeveralForwardsEqualOneForward) {
  for (MaskVariant variant : {MaskVariant::Reference, MaskVariant::AnchorVisible}) {
    const at::Tensor one = drafter.teacherForced(features, tokens, anchors, variant);
    const at::Tensor chunked = drafter.teacherForced(features, tokens, anchors, variant, 2);
    ASSERT_EQ(chunked.sizes(), one.sizes());
    EXPECT_LE(maxAbsDiff(chunked, one), 1e-5) << dfi::enumName(variant);
  }
  EXPECT_EQ(drafter.teacherForced(features, tokens, {}).sizes().vec(), (std::vector<std::int64_t>{0, 3, 64}));
}

TEST_F(DrafterLayouts, AttentionIsExactlyZeroWhereTheAnalysisMaskForbids) {
  // The GUI draws analysis masks; the probabilities the drafter reports must obey them.
  const std::int64_t anchor = 13;
  for (MaskVariant variant : {MaskVariant::Reference, MaskVariant::AnchorVisible, MaskVariant::BlockCausal}) {
    DrafterKvCache cache = drafter.newCache();
    DrafterProbes probes{.wantAttention = true};
    const std::int64_t context = analysis::inferenceContextLength(variant, anchor);
    drafter.draft(cache, features.narrow(0, 0, context), 3, anchor, variant, &probes);
    const std::vector<at::Tensor>& attention = probes.attention;
    ASSERT_EQ(attention.size(), 3u);
    for (int l = 0; l < 3; ++l) {
      const bool sliding = config.layerTypes[static_cast<std::size_t>(l)] == modelspec::LayerType::SlidingAttention;
      const analysis::MaskSpec spec{.variant = variant,
                                    .layer = sliding ? analysis::LayerAttention::Sliding : analysis::LayerAttention::Full,
                                    .blockSize = 4,
                                    .slidingWindow = sliding ? 5 : 0};
      const at::Tensor allowed =
          at::tensor(analysis::inferenceMask(spec, anchor), at::kByte).view({4, context + 4}).to(at::kBool);
      const at::Tensor probs = attention[static_cast<std::size_t>(l)];
      SCOPED_TRACE(std::string(dfi::enumName(variant)) + " layer " + std::to_string(l));
      ASSERT_EQ(probs.sizes().vec(), (std::vector<std::int64_t>{4, 4, context + 4}));
      EXPECT_EQ(probs.masked_select(allowed.logical_not().expand_as(probs)).abs().sum().item<float>(), 0.0f);
      EXPECT_GT(probs.masked_select(allowed.expand_as(probs)).min().item<float>(), 0.0f);
      EXPECT_LE((probs.sum(-1) - 1).abs().max().item<double>(), 1e-5);
    }
  }
}

TEST_F(DrafterLayouts, AGrowingCacheEqualsAFreshOne) {
  // The live loop appends only the newly verified rows; the result must not depend on how the
  // context arrived.
  DrafterKvCache cache = drafter.newCache();
  for (std::int64_t anchor : {3, 4, 9, 16}) {
    const at::Tensor fresh = liveDraft(anchor, MaskVariant::Reference);
    const at::Tensor incremental =
        drafter.draft(cache, features.narrow(0, cache.length(), anchor - cache.length()),
                      tokens[anchor].item<std::int64_t>(), anchor);
    EXPECT_EQ(cache.length(), anchor);
    EXPECT_LE(maxAbsDiff(incremental, fresh), 1e-5) << "anchor " << anchor;
  }
}

TEST_F(DrafterLayouts, CropRewindsToAnEarlierAnchor) {
  DrafterKvCache cache = drafter.newCache();
  drafter.draft(cache, features.narrow(0, 0, 13), 5, 13);
  cache.crop(7);
  EXPECT_EQ(cache.length(), 7);
  const at::Tensor rewound = drafter.draft(cache, features.narrow(0, 0, 0), 5, 7);
  DrafterKvCache fresh = drafter.newCache();
  EXPECT_LE(maxAbsDiff(rewound, drafter.draft(fresh, features.narrow(0, 0, 7), 5, 7)), 1e-5);
  EXPECT_THROW(cache.crop(8), UsageError);
}

TEST_F(DrafterLayouts, ContextThatDoesNotReachTheAnchorIsRefused) {
  DrafterKvCache cache = drafter.newCache();
  try {
    drafter.draft(cache, features.narrow(0, 0, 5), 1, 7);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sees 7 context positions"), std::string::npos) << e.what();
  }
}

TEST_F(DrafterLayouts, Bf16FollowsFp32) {
  DrafterWeights w = testing::randomDrafterWeights(config, 32, 7);
  for (auto* t : {&w.fc, &w.hiddenNorm, &w.norm}) *t = t->to(at::kBFloat16);
  for (auto& l : w.layers)
    for (auto* t : {&l.inputLayernorm, &l.qProj, &l.kProj, &l.vProj, &l.oProj, &l.qNorm, &l.kNorm,
                    &l.postAttentionLayernorm, &l.gateProj, &l.upProj, &l.downProj})
      *t = t->to(at::kBFloat16);
  TargetHead head = testing::randomTargetHead(64, 32, 8);
  head.embedTokens = head.embedTokens.to(at::kBFloat16);
  head.lmHead = head.lmHead.to(at::kBFloat16);
  const DFlashDrafter bf16(config, std::move(w), head);
  const at::Tensor low = bf16.teacherForced(features, tokens, anchors);
  const at::Tensor full = drafter.teacherForced(features, tokens, anchors);
  EXPECT_EQ(low.scalar_type(), at::kBFloat16);
  const double scale = full.abs().max().item<double>();
  EXPECT_LE(maxAbsDiff(low, full), 0.1 * scale);
}

TEST(DrafterValidation, TargetHeadMustFitTheDrafter) {
  const modelspec::DrafterConfig config = testing::smallDrafterConfig();
  auto build = [&](modelspec::DrafterConfig c, TargetHead head) {
    return DFlashDrafter(c, testing::randomDrafterWeights(c, 32, 1), head);
  };
  auto expectError = [](auto&& make, const std::string& item, const std::string& text) {
    try {
      make();
      ADD_FAILURE() << "expected ValidationError about " << item;
    } catch (const ValidationError& e) {
      EXPECT_EQ(e.context().item, item);
      EXPECT_NE(e.message().find(text), std::string::npos) << e.message();
    }
  };
  expectError([&] { build(config, testing::randomTargetHead(64, 24, 2)); }, "target embed_tokens",
              "has 24 columns, the drafter's hidden_size is 32");
  modelspec::DrafterConfig badMask = config;
  badMask.maskTokenId = 64;
  expectError([&] { build(badMask, testing::randomTargetHead(64, 32, 2)); }, "dflash_config.mask_token_id",
              "mask token id 64 is outside the target's embedding (64 rows)");
  modelspec::DrafterConfig noMask = config;
  noMask.maskTokenId.reset();
  expectError([&] { build(noMask, testing::randomTargetHead(64, 32, 2)); }, "dflash_config.mask_token_id",
              "no mask token id");
}

// DFlash2's convolution is causal along the block: a block's first rows mix as they would at
// the start of any longer block, also when the block is shorter than the kernel's reach. (dflash
// 0.1.0's _grouped_dynamic_convolve raises there: F.pad past the block mis-shapes it, as
// tests/oracle/gen_dflash_package.py shows; a shortened last block of 2 rows with a kernel of
// 4 hits it.)
TEST(GroupedDynamicConv, ShortBlocksMixAsTheStartOfLongerOnes) {
  at::manual_seed(3);
  const ConvWeights w{at::randn({2, 4, 8}), at::randn({2 * 4 * 2, 8}) * 0.3};
  const GroupedDynamicConv conv(w, 4);
  const at::Tensor rows = at::randn({1, 6, 8});
  for (std::int64_t length : {1, 2, 3}) {
    const auto [longMixed, longDynamic] = conv.prepare(rows);
    const auto [shortMixed, shortDynamic] = conv.prepare(rows.narrow(1, 0, length));
    EXPECT_TRUE(at::allclose(shortMixed, longMixed.narrow(1, 0, length), 1e-6, 1e-6)) << length;
    const at::Tensor out = at::randn({1, 6, 8});
    EXPECT_TRUE(at::allclose(conv.finish(out.narrow(1, 0, length), shortDynamic),
                             conv.finish(out, longDynamic).narrow(1, 0, length), 1e-6, 1e-6))
        << length;
  }
}

}  // namespace
}  // namespace dfi::engine
