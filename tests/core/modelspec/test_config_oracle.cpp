// Parses the config.json files tests/oracle/gen_configs.py wrote (transformers'
// save_pretrained output and legacy spellings) and compares every derived value with what
// transformers itself derived from the same file.

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dfi/modelspec/config_error.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/modelspec/target_config.h"

namespace dfi::modelspec {
namespace {

std::filesystem::path oracleDir() {
  const char* dir = std::getenv("DFI_CONFIG_ORACLE");
  return dir ? dir : DFI_BINARY_DIR "/oracle/configs";
}

nlohmann::json load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing oracle file " + path.string() + " (run the configs_oracle fixture)");
  return nlohmann::json::parse(in);
}

std::vector<std::string> layerTypeNames(const TargetConfig& c) {
  std::vector<std::string> names;
  for (LayerType t : c.layerTypes) names.emplace_back(layerTypeName(t));
  return names;
}

void expectMatches(const std::string& name, const nlohmann::json& e) {
  SCOPED_TRACE(name);
  const TargetConfig c = parseTargetConfig(oracleDir() / name / "config.json");
  EXPECT_EQ(c.modelType, e["model_type"].get<std::string>());
  EXPECT_EQ(c.hiddenSize, e["hidden_size"].get<int>());
  EXPECT_EQ(c.intermediateSize, e["intermediate_size"].get<int>());
  EXPECT_EQ(c.numHiddenLayers, e["num_hidden_layers"].get<int>());
  EXPECT_EQ(c.numAttentionHeads, e["num_attention_heads"].get<int>());
  EXPECT_EQ(c.numKeyValueHeads, e["num_key_value_heads"].get<int>());
  EXPECT_EQ(c.headDim, e["head_dim"].get<int>());
  EXPECT_EQ(c.vocabSize, e["vocab_size"].get<int>());
  EXPECT_DOUBLE_EQ(c.rmsNormEps, e["rms_norm_eps"].get<double>());
  EXPECT_EQ(c.maxPositionEmbeddings, e["max_position_embeddings"].get<int>());
  EXPECT_EQ(c.tieWordEmbeddings, e["tie_word_embeddings"].get<bool>());
  EXPECT_EQ(layerTypeNames(c), e["layer_types"].get<std::vector<std::string>>());
  EXPECT_EQ(c.eosTokenIds, e["eos_token_ids"].get<std::vector<int>>());
  if (e["sliding_window"].is_null()) EXPECT_FALSE(c.slidingWindow);
  else EXPECT_EQ(c.slidingWindow, e["sliding_window"].get<int>());

  EXPECT_EQ(c.rope.type, e["rope_type"].get<std::string>());
  EXPECT_DOUBLE_EQ(c.rope.theta, e["rope_theta"].get<double>());
  EXPECT_DOUBLE_EQ(c.rope.partialRotaryFactor, e["partial_rotary_factor"].get<double>());
  if (e.contains("rope_factor")) {
    EXPECT_DOUBLE_EQ(c.rope.factor, e["rope_factor"].get<double>());
    EXPECT_DOUBLE_EQ(c.rope.originalMaxPositionEmbeddings, e["original_max_position_embeddings"].get<double>());
  }
  // transformers builds inv_freq in float32, this code in double: compare relatively.
  const auto expectedInvFreq = e["inv_freq"].get<std::vector<double>>();
  const std::vector<double> invFreq = ropeInverseFrequencies(c.rope, c.headDim, c.maxPositionEmbeddings);
  ASSERT_EQ(invFreq.size(), expectedInvFreq.size());
  for (std::size_t i = 0; i < invFreq.size(); ++i)
    EXPECT_NEAR(invFreq[i], expectedInvFreq[i], 2e-6 * expectedInvFreq[i]) << "inv_freq[" << i << "]";
  EXPECT_NEAR(ropeAttentionScaling(c.rope), e["attention_scaling"].get<double>(), 1e-12);

  if (e.contains("linear_conv_kernel_dim")) {
    EXPECT_EQ(c.linearConvKernelDim, e["linear_conv_kernel_dim"].get<int>());
    EXPECT_EQ(c.linearKeyHeadDim, e["linear_key_head_dim"].get<int>());
    EXPECT_EQ(c.linearValueHeadDim, e["linear_value_head_dim"].get<int>());
    EXPECT_EQ(c.linearNumKeyHeads, e["linear_num_key_heads"].get<int>());
    EXPECT_EQ(c.linearNumValueHeads, e["linear_num_value_heads"].get<int>());
    EXPECT_TRUE(c.attnOutputGate);
  }
  if (e.contains("num_experts")) {
    ASSERT_TRUE(c.moe);
    EXPECT_EQ(c.moe->numExperts, e["num_experts"].get<int>());
    EXPECT_EQ(c.moe->numExpertsPerToken, e["num_experts_per_tok"].get<int>());
    // gpt-oss's experts are intermediate_size wide and every layer has them.
    EXPECT_EQ(c.moe->moeIntermediateSize, e.value("moe_intermediate_size", e["intermediate_size"].get<int>()));
    EXPECT_EQ(c.moe->sharedExpertIntermediateSize, e.value("shared_expert_intermediate_size", 0));
    EXPECT_EQ(c.moe->decoderSparseStep, e.value("decoder_sparse_step", 1));
    EXPECT_EQ(c.moe->mlpOnlyLayers, e.value("mlp_only_layers", std::vector<int>{}));
  } else {
    EXPECT_FALSE(c.moe);
  }
  if (e.contains("n_group")) {  // the DeepSeek-V3 line's router (GLM-4.5)
    ASSERT_TRUE(c.moe);
    EXPECT_EQ(c.moe->scoring, RouterScoring::Sigmoid);
    EXPECT_EQ(c.moe->numGroups, e["n_group"].get<int>());
    EXPECT_EQ(c.moe->topkGroups, e["topk_group"].get<int>());
    EXPECT_DOUBLE_EQ(c.moe->routedScalingFactor, e["routed_scaling_factor"].get<double>());
    EXPECT_EQ(c.moe->normTopkProb, e["norm_topk_prob"].get<bool>());
    EXPECT_EQ(c.traits.qkNorm, e["use_qk_norm"].get<bool>());
  }
  if (e.contains("kv_lora_rank")) {  // multi-head latent attention (DeepSeek-V3, Kimi K2)
    ASSERT_TRUE(c.latentAttention);
    EXPECT_EQ(c.latentAttention->qLoraRank, e["q_lora_rank"].get<int>());
    EXPECT_EQ(c.latentAttention->kvLoraRank, e["kv_lora_rank"].get<int>());
    EXPECT_EQ(c.latentAttention->qkNopeHeadDim, e["qk_nope_head_dim"].get<int>());
    EXPECT_EQ(c.latentAttention->qkRopeHeadDim, e["qk_rope_head_dim"].get<int>());
    EXPECT_EQ(c.latentAttention->vHeadDim, e["v_head_dim"].get<int>());
    EXPECT_EQ(c.latentAttention->ropeInterleave, e["rope_interleave"].get<bool>());
  } else {
    EXPECT_FALSE(c.latentAttention);
  }
  if (e.contains("indexer_types")) {  // DeepSeek sparse attention (GLM-5)
    ASSERT_TRUE(c.sparseIndexer);
    EXPECT_EQ(c.sparseIndexer->topk, e["index_topk"].get<int>());
    EXPECT_EQ(c.sparseIndexer->headDim, e["index_head_dim"].get<int>());
    EXPECT_EQ(c.sparseIndexer->numHeads, e["index_n_heads"].get<int>());
    std::vector<bool> own;
    for (const auto& type : e["indexer_types"]) own.push_back(type.get<std::string>() == "full");
    EXPECT_EQ(c.sparseIndexer->ownIndexer, own);
  } else {
    EXPECT_FALSE(c.sparseIndexer);
  }
  if (e.contains("swiglu_limit")) {
    ASSERT_TRUE(c.swigluClamp);
    EXPECT_DOUBLE_EQ(c.swigluClamp->limit, e["swiglu_limit"].get<double>());
    EXPECT_DOUBLE_EQ(c.swigluClamp->alpha, e["swiglu_alpha"].get<double>());
  }
  if (e.contains("attention_bias")) {
    EXPECT_EQ(c.attentionBias, e["attention_bias"].get<bool>());
  }
  if (e.contains("mlp_bias")) {
    EXPECT_EQ(c.mlpBias, e["mlp_bias"].get<bool>());
  }
}

TEST(ConfigOracle, EveryTransformersCaseParsesToTheSameValues) {
  const nlohmann::json expected = load(oracleDir() / "expected.json");
  ASSERT_GE(expected.size(), 10u);
  for (const auto& [name, values] : expected.items()) expectMatches(name, values);
}

TEST(ConfigOracle, FamiliesAreDetectedFromModelType) {
  EXPECT_EQ(parseTargetConfig(oracleDir() / "qwen3_8b_saved/config.json").family, TargetFamily::Qwen3);
  const TargetConfig q35 = parseTargetConfig(oracleDir() / "qwen3_5_0p8b_saved/config.json");
  EXPECT_EQ(q35.family, TargetFamily::Qwen3_5);
  EXPECT_EQ(q35.textConfigPath, "text_config");
  EXPECT_EQ(q35.rope.mropeSection, (std::vector<int>{11, 11, 10}));
  EXPECT_TRUE(q35.rope.mropeInterleaved);
  EXPECT_EQ(parseTargetConfig(oracleDir() / "qwen3_5_text_causal_lm/config.json").textConfigPath, "");
  EXPECT_EQ(parseTargetConfig(oracleDir() / "qwen3_next_saved/config.json").family, TargetFamily::Qwen3Next);
  EXPECT_EQ(parseTargetConfig(oracleDir() / "llama_3_1_8b_published/config.json").family, TargetFamily::Llama);
  const TargetConfig oss = parseTargetConfig(oracleDir() / "gpt_oss_20b_published/config.json");
  EXPECT_EQ(oss.family, TargetFamily::GptOss);
  EXPECT_TRUE(oss.attentionSinks);
  ASSERT_TRUE(oss.quantization);
  EXPECT_EQ(oss.quantization->method, "mxfp4");
}

TEST(ConfigOracle, PublishedMiniMaxM2AndGlmConfigsReadAsTheirFamilies) {
  const TargetConfig minimax = parseTargetConfig(oracleDir() / "minimax_m2_published_bf16/config.json");
  EXPECT_EQ(minimax.family, TargetFamily::MiniMaxM2);
  EXPECT_EQ(minimax.rope.rotaryDim(minimax.headDim), 64);  // its rotary_dim
  EXPECT_TRUE(minimax.traits.qkNormAcrossHeads);
  ASSERT_TRUE(minimax.moe);
  EXPECT_EQ(minimax.moe->scoring, RouterScoring::Sigmoid);
  for (const char* glm : {"glm_4_5_published", "glm_4_6_published"}) {
    const TargetConfig c = parseTargetConfig(oracleDir() / glm / "config.json");
    EXPECT_EQ(c.family, TargetFamily::Glm4Moe) << glm;
    EXPECT_FALSE(c.traits.attentionBiasOnOutput) << glm;
  }
}

// A published file the engine cannot run is refused by name: FP8 weights with UE8M0 scales (the
// engine dequantises FP8 with float32 scales only).
TEST(ConfigOracle, PublishedConfigsOfUnsupportedWeightsAreRefusedByName) {
  const nlohmann::json refused = load(oracleDir() / "refused.json");
  ASSERT_FALSE(refused.empty());
  for (const auto& [name, reason] : refused.items()) {
    SCOPED_TRACE(name);
    try {
      parseTargetConfig(oracleDir() / name / "config.json");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigValidationError& e) {
      EXPECT_NE(std::string(e.what()).find("\"" + reason.get<std::string>() + "\""), std::string::npos) << e.what();
    }
  }
}

TEST(ConfigOracle, DefaultTargetLayerIdsMatchPythonRound) {
  const nlohmann::json cases = load(oracleDir() / "default_layer_ids.json");
  ASSERT_GE(cases.size(), 1000u);
  for (const auto& c : cases) {
    const int layers = c["target_layers"].get<int>();
    const int draft = c["draft_layers"].get<int>();
    EXPECT_EQ(defaultTargetLayerIds(layers, draft), c["ids"].get<std::vector<int>>())
        << "L=" << layers << " n=" << draft;
  }
}

}  // namespace
}  // namespace dfi::modelspec
