// DeepSeek-V3 and Kimi K2.5 targets against transformers (tests/oracle/gen_deepseek_models.py):
// the oracle suite (fp32 logits and hidden states, bf16 argmax, cached decode against
// transformers' own and a full recompute, verification rollback of the latent cache) and the
// routing suite (group-limited sigmoid routing with the correction bias and routed scaling) over
// multi-head latent attention with and without the q LoRA, interleaved and rotate-half rope,
// DeepSeek's YaRN mscale, and Kimi K2.5's multimodal layout; then how their configs read and
// what a config that disagrees with the weights reports. The live loop is test_dflash_live_deepseek_v3.

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "models/latent_attention.h"
#include "moe_routing_suite.h"
#include "target_oracle_suite.h"

namespace dfi::engine::test {
namespace {

INSTANTIATE_TEST_SUITE_P(Deepseek, TargetOracle,
                         ::testing::Values("deepseek/deepseek_v3_yarn", "deepseek/deepseek_v3_plain",
                                           "deepseek/kimi_k25"));
INSTANTIATE_TEST_SUITE_P(Deepseek, MoeRouting,
                         ::testing::Values("deepseek/deepseek_v3_yarn", "deepseek/deepseek_v3_plain",
                                           "deepseek/kimi_k25"));

std::filesystem::path modelDir(const std::string& name) { return oracleRoot() / "deepseek" / name; }

TEST(DeepseekConfig, ReadsAsTransformersDefinesIt) {
  const modelspec::TargetConfig yarn = modelspec::parseTargetConfig(modelDir("deepseek_v3_yarn") / "config.json");
  EXPECT_EQ(yarn.family, modelspec::TargetFamily::DeepseekV3);
  ASSERT_TRUE(yarn.latentAttention);
  EXPECT_EQ(*yarn.latentAttention, (modelspec::LatentAttention{.qLoraRank = 24,
                                                               .kvLoraRank = 16,
                                                               .qkNopeHeadDim = 16,
                                                               .qkRopeHeadDim = 8,
                                                               .vHeadDim = 12,
                                                               .ropeInterleave = true}));
  EXPECT_EQ(yarn.headDim, 8);  // DeepseekV3Config: head_dim = qk_rope_head_dim
  EXPECT_EQ(yarn.rope.type, "yarn");
  // qk_head_dim^-0.5 * (0.1 * mscale_all_dim * ln(factor) + 1)^2
  const double mscale = 0.1 * std::log(4.0) + 1.0;
  EXPECT_DOUBLE_EQ(latentAttentionScale(yarn.rope, 24), std::pow(24.0, -0.5) * mscale * mscale);
  ASSERT_TRUE(yarn.moe);
  EXPECT_EQ(yarn.moe->numGroups, 4);
  EXPECT_EQ(yarn.moe->topkGroups, 2);
  EXPECT_DOUBLE_EQ(yarn.moe->routedScalingFactor, 2.5);
  EXPECT_EQ(yarn.moe->sharedExpertIntermediateSize, 48);
  EXPECT_EQ(yarn.moe->mlpOnlyLayers, std::vector<int>{0});

  const modelspec::TargetConfig plain = modelspec::parseTargetConfig(modelDir("deepseek_v3_plain") / "config.json");
  ASSERT_TRUE(plain.latentAttention);
  EXPECT_EQ(plain.latentAttention->qLoraRank, 0);
  EXPECT_FALSE(plain.latentAttention->ropeInterleave);
  EXPECT_TRUE(plain.attentionBias);
  EXPECT_DOUBLE_EQ(latentAttentionScale(plain.rope, 24), std::pow(24.0, -0.5));
  EXPECT_FALSE(plain.moe->normTopkProb);
  EXPECT_EQ(plain.moe->mlpOnlyLayers, (std::vector<int>{0, 1}));

  const modelspec::TargetConfig kimi = modelspec::parseTargetConfig(modelDir("kimi_k25") / "config.json");
  EXPECT_EQ(kimi.family, modelspec::TargetFamily::DeepseekV3);
  EXPECT_EQ(kimi.modelType, "kimi_k25");
  EXPECT_EQ(kimi.textConfigPath, "text_config");
  EXPECT_FALSE(kimi.tieWordEmbeddings);
  ASSERT_TRUE(kimi.moe);
  EXPECT_DOUBLE_EQ(kimi.moe->routedScalingFactor, 2.827);
}

// The published Kimi K2.5 files keep the text model under language_model.model.layers (the random
// fixture is rewritten that way); transformers' save_pretrained writes language_model.model.blocks
// (the trained copy): both read as the engine's model.layers, and the towers are left out.
TEST(DeepseekConfig, KimiK25LayoutsReadAsTheTextModel) {
  for (const std::string name : {"kimi_k25", "kimi_k25_trained"}) {
    SCOPED_TRACE(name);
    const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(modelDir(name));
    EXPECT_TRUE(checkpoint.contains("model.layers.0.self_attn.kv_a_proj_with_mqa.weight"));
    EXPECT_TRUE(checkpoint.contains("lm_head.weight"));
    for (const std::string& tensor : checkpoint.names()) {
      EXPECT_EQ(tensor.find("vision"), std::string::npos) << tensor;
      EXPECT_EQ(tensor.find("projector"), std::string::npos) << tensor;
    }
  }
}

// A copy of `model` whose config.json sets `field` to `value`, with the fixture's weights.
std::filesystem::path withConfigField(const std::string& model, const std::string& field, int value) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(DFI_BINARY_DIR) / "tmp" / ("deepseek_errors_" + model + "_" + field);
  fs::create_directories(dir);
  std::ifstream in(modelDir(model) / "config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config[field] = value;
  std::ofstream(dir / "config.json") << config.dump(2);
  fs::copy_file(modelDir(model) / "model.safetensors", dir / "model.safetensors", fs::copy_options::overwrite_existing);
  return dir;
}

// A config whose latent shapes disagree with the weights: a ValidationError naming the checkpoint
// file, the tensor and both shapes.
TEST(DeepseekErrors, ShapesThatDisagreeWithTheWeightsNameTensorAndShapes) {
  struct Case {
    std::string model, field;
    int value;
    std::string tensor, stored, implied;
  };
  const std::vector<Case> cases{
      {"deepseek_v3_yarn", "kv_lora_rank", 32, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "[24, 64]",
       "[40, 64]"},
      {"deepseek_v3_yarn", "q_lora_rank", 16, "model.layers.0.self_attn.q_a_proj.weight", "[24, 64]", "[16, 64]"},
      {"deepseek_v3_yarn", "v_head_dim", 16, "model.layers.0.self_attn.kv_b_proj.weight", "[112, 16]", "[128, 16]"},
      {"deepseek_v3_plain", "qk_nope_head_dim", 8, "model.layers.0.self_attn.q_proj.weight", "[96, 64]",
       "[64, 64]"},
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
