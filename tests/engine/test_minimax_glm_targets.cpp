// MiniMax-M2 and GLM-4.5 targets against transformers (tests/oracle/gen_minimax_glm_models.py):
// the oracle suite (fp32 logits and hidden states, bf16 argmax, cached decode against
// transformers' own and a full recompute, verification rollback) and the routing suite (the
// sigmoid router's choices and weights equal transformers' routers', with the correction bias,
// group-limited top-k and routed scaling), over these models; then how their configs read and
// what a config that disagrees with the weights reports. Their live loops are
// test_dflash_live_minimax_m2 and test_dflash_live_glm4_moe.

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "moe_routing_suite.h"
#include "target_oracle_suite.h"

namespace dfi::engine::test {
namespace {

INSTANTIATE_TEST_SUITE_P(MiniMaxGlm, TargetOracle,
                         ::testing::Values("minimax_glm/minimax_m2", "minimax_glm/glm4_moe_groups",
                                           "minimax_glm/glm4_moe_plain"));
INSTANTIATE_TEST_SUITE_P(MiniMaxGlm, MoeRouting,
                         ::testing::Values("minimax_glm/minimax_m2", "minimax_glm/glm4_moe_groups",
                                           "minimax_glm/glm4_moe_plain"));

std::filesystem::path modelDir(const std::string& name) { return oracleRoot() / "minimax_glm" / name; }

TEST(MiniMaxGlmConfig, FamiliesReadAsTransformersDefinesThem) {
  const modelspec::TargetConfig minimax = modelspec::parseTargetConfig(modelDir("minimax_m2") / "config.json");
  EXPECT_EQ(minimax.family, modelspec::TargetFamily::MiniMaxM2);
  EXPECT_TRUE(minimax.traits.qkNorm && minimax.traits.qkNormAcrossHeads);
  EXPECT_EQ(minimax.rope.rotaryDim(minimax.headDim), 8);
  ASSERT_TRUE(minimax.moe);
  EXPECT_EQ(minimax.moe->scoring, modelspec::RouterScoring::Sigmoid);
  EXPECT_FALSE(minimax.moe->routerInFp32);
  EXPECT_EQ(minimax.moe->moeIntermediateSize, 32);
  for (int i = 0; i < minimax.numHiddenLayers; ++i) EXPECT_TRUE(minimax.moe->moeLayer(i)) << i;

  const modelspec::TargetConfig groups = modelspec::parseTargetConfig(modelDir("glm4_moe_groups") / "config.json");
  EXPECT_EQ(groups.family, modelspec::TargetFamily::Glm4Moe);
  EXPECT_EQ(groups.headDim, 16);  // absent: hidden_size / num_attention_heads
  EXPECT_TRUE(groups.traits.qkNorm);
  EXPECT_FALSE(groups.traits.qkNormAcrossHeads);
  EXPECT_TRUE(groups.attentionBias);
  EXPECT_FALSE(groups.traits.attentionBiasOnOutput);
  EXPECT_EQ(groups.rope.partialRotaryFactor, 0.5);
  ASSERT_TRUE(groups.moe);
  EXPECT_EQ(groups.moe->numGroups, 4);
  EXPECT_EQ(groups.moe->topkGroups, 2);
  EXPECT_DOUBLE_EQ(groups.moe->routedScalingFactor, 2.5);
  EXPECT_TRUE(groups.moe->routerInFp32);
  EXPECT_EQ(groups.moe->sharedExpertIntermediateSize, 24);
  EXPECT_FALSE(groups.moe->sharedExpertGated);
  EXPECT_EQ(groups.moe->mlpOnlyLayers, std::vector<int>{0});

  const modelspec::TargetConfig plain = modelspec::parseTargetConfig(modelDir("glm4_moe_plain") / "config.json");
  EXPECT_EQ(plain.headDim, 32);
  EXPECT_FALSE(plain.traits.qkNorm);
  ASSERT_TRUE(plain.moe);
  EXPECT_FALSE(plain.moe->normTopkProb);
  EXPECT_EQ(plain.moe->sharedExpertIntermediateSize, 48);  // two shared experts' width
  EXPECT_EQ(plain.moe->mlpOnlyLayers, (std::vector<int>{0, 1}));
}

// A copy of `model` whose config.json sets `field` to `value`, with the fixture's weights.
std::filesystem::path withConfigField(const std::string& model, const std::string& field, int value) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(DFI_BINARY_DIR) / "tmp" / ("minimax_glm_errors_" + model + "_" + field);
  fs::create_directories(dir);
  std::ifstream in(modelDir(model) / "config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config[field] = value;
  std::ofstream(dir / "config.json") << config.dump(2);
  fs::copy_file(modelDir(model) / "model.safetensors", dir / "model.safetensors", fs::copy_options::overwrite_existing);
  return dir;
}

// A config whose shapes disagree with the weights: a ValidationError naming the checkpoint file,
// the tensor and both shapes.
TEST(MiniMaxGlmErrors, ShapesThatDisagreeWithTheWeightsNameTensorAndShapes) {
  struct Case {
    std::string model, field;
    int value;
    std::string tensor, stored, implied;
  };
  const std::vector<Case> cases{
      {"minimax_m2", "num_local_experts", 7, "model.layers.0.block_sparse_moe.gate.weight", "[8, 64]", "[7, 64]"},
      {"minimax_m2", "intermediate_size", 16, "model.layers.0.block_sparse_moe.experts.0.w1.weight", "[32, 64]",
       "[16, 64]"},
      {"minimax_m2", "num_key_value_heads", 4, "model.layers.0.self_attn.k_proj.weight", "[32, 64]", "[64, 64]"},
      {"glm4_moe_groups", "n_shared_experts", 2, "model.layers.1.mlp.shared_experts.gate_proj.weight", "[24, 64]",
       "[48, 64]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model + " " + c.field);
    const std::filesystem::path dir = withConfigField(c.model, c.field, c.value);
    try {
      TargetModel::load(dir, ModelOptions{});
      ADD_FAILURE() << "loaded";
    } catch (const ValidationError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find((dir / "model.safetensors").string()), std::string::npos) << message;
      for (const std::string& part : {c.tensor, c.stored, c.implied})
        EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
    }
  }
}

}  // namespace
}  // namespace dfi::engine::test
