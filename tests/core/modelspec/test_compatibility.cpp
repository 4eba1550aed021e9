// The drafter-vs-target check: a published pairing is clean, a wrong pairing reports every
// mismatch at once with field and both values, and a last-layer tap is only a warning.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_util.h"
#include "dfi/modelspec/compatibility.h"

namespace dfi::modelspec {
namespace {

using ::testing::HasSubstr;
using testing::configFixture;

const CompatibilityIssue* find(const CompatibilityReport& r, const std::string& field) {
  for (const CompatibilityIssue& i : r.issues)
    if (i.field == field) return &i;
  return nullptr;
}
// A report that is about to go away would leave the returned pointer dangling.
const CompatibilityIssue* find(CompatibilityReport&& r, const std::string& field) = delete;

DrafterConfig qwen3Drafter() { return parseDrafterConfig(configFixture("zlab_qwen3_8b_dflash_b16.json")); }
TargetConfig qwen3Target() { return parseTargetConfig(configFixture("qwen3_8b.json")); }

TEST(Compatibility, PublishedPairsFit) {
  EXPECT_TRUE(checkCompatibility(qwen3Drafter(), qwen3Target()).issues.empty());
  const CompatibilityReport r = checkCompatibility(parseDrafterConfig(configFixture("zlab_qwen3_6_27b_dflash.json")),
                                                   parseTargetConfig(configFixture("qwen3_6_27b.json")),
                                                   {.drafterFcWeightShape = std::vector<std::int64_t>{5120, 25600},
                                                    .targetEmbeddingRows = 248320});
  EXPECT_TRUE(r.issues.empty());
  EXPECT_NO_THROW(r.throwIfIncompatible("drafter", "target"));
}

TEST(Compatibility, WrongTargetReportsEveryMismatchAtOnce) {
  // The Qwen3-8B drafter against Qwen3.6-27B.
  const CompatibilityReport r = checkCompatibility(qwen3Drafter(), parseTargetConfig(configFixture("qwen3_6_27b.json")),
                                                   {.drafterFcWeightShape = std::vector<std::int64_t>{4096, 20480}});
  ASSERT_NE(find(r, "hidden_size"), nullptr);
  EXPECT_EQ(find(r, "hidden_size")->drafterValue, "4096");
  EXPECT_EQ(find(r, "hidden_size")->targetValue, "5120");
  ASSERT_NE(find(r, "fc.weight"), nullptr);
  EXPECT_EQ(find(r, "fc.weight")->drafterValue, "[4096, 20480]");
  EXPECT_EQ(find(r, "fc.weight")->targetValue, "5 taps x hidden 5120 = 25600");
  ASSERT_NE(find(r, "vocab_size"), nullptr);
  EXPECT_EQ(find(r, "vocab_size")->targetValue, "248320");
  ASSERT_NE(find(r, "num_target_layers"), nullptr);
  EXPECT_EQ(find(r, "num_target_layers")->severity, Severity::Warning);
  EXPECT_EQ(r.count(Severity::Error), 3u);
  EXPECT_FALSE(r.compatible());
}

TEST(Compatibility, TapsPastTheTargetAndMaskPastTheEmbeddingAreErrors) {
  DrafterConfig d = qwen3Drafter();
  d.targetLayerIds = {1, 9, 17, 25, 36};
  d.maskTokenId = 151936;
  const CompatibilityReport r = checkCompatibility(d, qwen3Target());
  const CompatibilityIssue* tap = find(r, "dflash_config.target_layer_ids[4]");
  ASSERT_NE(tap, nullptr);
  EXPECT_EQ(tap->drafterValue, "36");
  EXPECT_EQ(tap->targetValue, "num_hidden_layers 36");
  const CompatibilityIssue* mask = find(r, "dflash_config.mask_token_id");
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->targetValue, "vocab_size 151936");
  EXPECT_EQ(r.count(Severity::Error), 2u);

  // The embedding table's row count, when known, is what the mask id must fit.
  d.maskTokenId = 151669;
  const CompatibilityReport rows = checkCompatibility(d, qwen3Target(), {.targetEmbeddingRows = 151669});
  ASSERT_NE(find(rows, "dflash_config.mask_token_id"), nullptr);
  EXPECT_EQ(find(rows, "dflash_config.mask_token_id")->targetValue, "embed_tokens rows 151669");
}

TEST(Compatibility, LastLayerTapIsAShortcutWarning) {
  DrafterConfig d = qwen3Drafter();
  d.targetLayerIds = {1, 9, 17, 25, 35};
  const CompatibilityReport r = checkCompatibility(d, qwen3Target());
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].severity, Severity::Warning);
  EXPECT_THAT(r.issues[0].message, HasSubstr("shortcut tap"));
  EXPECT_TRUE(r.compatible());
}

TEST(Compatibility, MissingMaskIdIsAnError) {
  DrafterConfig d = qwen3Drafter();
  d.maskTokenId.reset();
  const CompatibilityReport r = checkCompatibility(d, qwen3Target());
  const CompatibilityIssue* i = find(r, "dflash_config.mask_token_id");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->drafterValue, "absent");
}

TEST(Compatibility, ThrownErrorListsEveryError) {
  DrafterConfig d = qwen3Drafter();
  d.hiddenSize = 2560;
  d.vocabSize = 1000;
  const CompatibilityReport r = checkCompatibility(d, qwen3Target());
  try {
    r.throwIfIncompatible("draft/config.json", "target/config.json");
    FAIL() << "expected a ValidationError";
  } catch (const ValidationError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("2 error(s)"));
    EXPECT_THAT(what, HasSubstr("hidden_size: drafter 2560, target 4096"));
    EXPECT_THAT(what, HasSubstr("vocab_size: drafter 1000, target 151936"));
  }
}

}  // namespace
}  // namespace dfi::modelspec
