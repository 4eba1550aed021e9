// The tensors a config implies, checked against checkpoints written here: a faithful drafter
// and a Qwen3 target pass; a missing, a reshaped and an unexplained tensor are each reported.
// (tests/eval checks the same against checkpoints transformers wrote.)

#include <unistd.h>

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_util.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "dfi/modelspec/weight_layout.h"

namespace dfi::modelspec {
namespace {

namespace fs = std::filesystem;
using tensorfile::Checkpoint;
using tensorfile::DType;
using tensorfile::NameMapping;
using tensorfile::SafetensorsWriter;

class WeightLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dfi_weight_layout_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `tensors` as zero-filled BF16 into dir_/model.safetensors and opens it.
  Checkpoint write(const std::vector<ExpectedTensor>& tensors, NameMapping mapping = NameMapping::identity()) {
    SafetensorsWriter writer(dir_ / "model.safetensors");
    for (const ExpectedTensor& t : tensors) {
      std::int64_t numel = 1;
      for (std::int64_t d : t.shape) numel *= d;
      std::vector<std::byte> zeros(static_cast<std::size_t>(numel) * 2);
      writer.add(t.name, DType::BF16, t.shape, zeros);
    }
    writer.finish();
    return Checkpoint::open(dir_, std::move(mapping));
  }

  fs::path dir_;
};

DrafterConfig tinyDrafter() {
  DrafterConfig d = parseDrafterConfig(testing::configFixture("zlab_qwen3_8b_dflash_b16.json"));
  d.hiddenSize = 8;
  d.numHiddenLayers = 2;
  d.numAttentionHeads = 4;
  d.numKeyValueHeads = 2;
  d.headDim = 2;
  d.intermediateSize = 12;
  d.targetLayerIds = {1, 3, 5};
  return d;
}

TEST_F(WeightLayout, DrafterFollowsTheDFlashLayout) {
  const std::vector<ExpectedTensor> expected = expectedDrafterTensors(tinyDrafter());
  ASSERT_EQ(expected.size(), 3u + 2u * 11u);  // fc, hidden_norm, norm + 11 per layer
  EXPECT_EQ(expected.front().name, "fc.weight");
  EXPECT_EQ(expected.front().shape, (std::vector<std::int64_t>{8, 24}));
  EXPECT_EQ(expectedDrafterTensors(tinyDrafter(), 16).front().shape, (std::vector<std::int64_t>{8, 48}));
  EXPECT_TRUE(checkWeightLayout(expected, write(expected)).empty());
}

// DFlash2 adds two convolutions per layer and the candidate selector; its codebooks read the
// same stored with or without ".weight" (z-lab's files omit it, save_pretrained writes it).
TEST_F(WeightLayout, Dflash2AddsConvolutionsAndTheSelectorUnderEitherCodebookName) {
  DrafterConfig d = tinyDrafter();
  d.vocabSize = 16;
  d.dflash2 = Dflash2Config{.convKernelSize = 3, .convGroupSize = 4, .selectorRank = 5, .selectorTopK = 4};
  const std::vector<ExpectedTensor> expected = expectedDrafterTensors(d);
  ASSERT_EQ(expected.size(), 3u + 2u * (11u + 4u) + 3u);
  auto shapeOf = [&](const std::string& name) {
    const auto it = std::ranges::find(expected, name, &ExpectedTensor::name);
    return it == expected.end() ? std::vector<std::int64_t>{} : it->shape;
  };
  EXPECT_EQ(shapeOf("layers.1.mlp_conv.base_kernel"), (std::vector<std::int64_t>{2, 3, 8}));
  EXPECT_EQ(shapeOf("layers.0.attention_conv.kernel_projection.weight"), (std::vector<std::int64_t>{12, 8}));
  EXPECT_EQ(shapeOf("candidate_selector.successor_codebook"), (std::vector<std::int64_t>{16, 5}));
  std::vector<ExpectedTensor> saved = expected;  // as save_pretrained names them
  for (ExpectedTensor& t : saved)
    if (t.name.ends_with("_codebook")) t.name += ".weight";
  EXPECT_TRUE(checkWeightLayout(expected, write(saved, NameMapping::dflashDrafter())).empty());
  EXPECT_FALSE(checkWeightLayout(expected, write(saved)).empty()) << "unmapped, the suffixed codebooks differ";
}

TEST_F(WeightLayout, EveryDifferenceIsReported) {
  std::vector<ExpectedTensor> stored = expectedDrafterTensors(tinyDrafter());
  stored.erase(stored.begin() + 1);                         // hidden_norm.weight missing
  stored.back().shape = {9};                                // norm.weight reshaped
  stored.push_back({"embed_tokens.weight", {16, 8}});       // not part of a DFlash drafter
  const auto issues = checkWeightLayout(expectedDrafterTensors(tinyDrafter()), write(stored));
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].tensor, "hidden_norm.weight");
  EXPECT_EQ(issues[0].found, "absent");
  EXPECT_EQ(issues[1].tensor, "norm.weight");
  EXPECT_EQ(issues[1].expected, "[8]");
  EXPECT_EQ(issues[1].found, "[9]");
  EXPECT_EQ(issues[2].tensor, "embed_tokens.weight");
  EXPECT_EQ(issues[2].expected, "absent");
}

TEST_F(WeightLayout, TargetLayoutFollowsLayerTypesTyingAndBias) {
  TargetConfig t = parseTargetConfig(testing::configFixture("qwen3_6_27b.json"));
  t.numHiddenLayers = 4;
  t.layerTypes.resize(4);
  auto expected = expectedTargetTensors(t);
  ASSERT_TRUE(expected);
  auto has = [&](const std::string& name) {
    return std::any_of(expected->begin(), expected->end(), [&](const ExpectedTensor& e) { return e.name == name; });
  };
  EXPECT_TRUE(has("model.layers.0.linear_attn.A_log"));
  EXPECT_TRUE(has("model.layers.3.self_attn.q_norm.weight"));
  EXPECT_FALSE(has("model.layers.3.linear_attn.A_log"));
  EXPECT_TRUE(has("lm_head.weight"));
  t.tieWordEmbeddings = true;
  t.attentionBias = true;
  expected = expectedTargetTensors(t);
  EXPECT_FALSE(has("lm_head.weight"));
  EXPECT_TRUE(has("model.layers.3.self_attn.o_proj.bias"));
  // A family whose module says its layout is not fixed (Qwen3-Next's; test_family_modules).
  t.traits.fixedTensorLayout = false;
  EXPECT_FALSE(expectedTargetTensors(t));
}

TEST_F(WeightLayout, Qwen3_5NamesAreMappedBeforeTheCheck) {
  TargetConfig t = parseTargetConfig(testing::configFixture("qwen3_6_27b.json"));
  t.hiddenSize = 4;
  t.intermediateSize = 4;
  t.vocabSize = 6;
  t.numHiddenLayers = 0;
  t.layerTypes.clear();
  // Stored as the vision-language checkpoint names them, with a vision tensor to skip.
  std::vector<ExpectedTensor> stored = {{"model.language_model.embed_tokens.weight", {6, 4}},
                                        {"model.language_model.norm.weight", {4}},
                                        {"lm_head.weight", {6, 4}},
                                        {"model.visual.patch_embed.proj.weight", {4, 3}}};
  EXPECT_TRUE(checkWeightLayout(*expectedTargetTensors(t), write(stored, NameMapping::qwenText())).empty());
}

}  // namespace
}  // namespace dfi::modelspec
