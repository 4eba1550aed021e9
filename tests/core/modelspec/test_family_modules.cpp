// The family registry (core/modelspec/src/families): every family has one module, every
// model_type one family, and the traits the engine reads are the family's own. What the traits
// compute is held against transformers by the engine's logit oracles of each family
// (tests/engine); here the table itself.

#include <set>
#include <variant>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dfi/modelspec/config_error.h"
#include "dfi/modelspec/decoder_geometry.h"
#include "dfi/modelspec/target_config.h"

namespace dfi::modelspec {
namespace {

TEST(FamilyModules, EveryModelTypeBelongsToOneDistinctlyNamedFamily) {
  const std::vector<std::string>& types = supportedTargetModelTypes();
  EXPECT_EQ(std::set<std::string>(types.begin(), types.end()).size(), types.size());
  std::set<std::string> names;
  for (TargetFamily family :
       {TargetFamily::Qwen3, TargetFamily::Qwen3_5, TargetFamily::Qwen3Next, TargetFamily::Llama, TargetFamily::GptOss,
        TargetFamily::MiniMaxM2, TargetFamily::Glm4Moe, TargetFamily::Gemma4, TargetFamily::DeepseekV3,
        TargetFamily::GlmMoeDsa})
    names.insert(std::string(targetFamilyName(family)));
  EXPECT_EQ(names, (std::set<std::string>{"Qwen3", "Qwen3.5", "Qwen3-Next", "Llama", "gpt-oss", "MiniMax-M2", "GLM-4.5",
                                          "Gemma 4", "DeepSeek-V3", "GLM-5"}));
  for (const char* type : {"qwen3", "qwen3_moe", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text",
                           "qwen3_next", "llama", "gpt_oss", "minimax_m2", "glm4_moe", "gemma4_text", "gemma4",
                           "deepseek_v3", "kimi_k2", "kimi_k25", "glm_moe_dsa"})
    EXPECT_NE(std::find(types.begin(), types.end(), type), types.end()) << type;
}

// The smallest config each family's parser accepts, with its own fields.
TargetConfig parsed(const std::string& modelType, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json j = {{"model_type", modelType}, {"hidden_size", 64},      {"intermediate_size", 128},
                      {"num_hidden_layers", 4},   {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                      {"head_dim", 16},           {"vocab_size", 256}};
  j.update(extra);
  return parseTargetConfigText(j.dump(), modelType + "/config.json");
}

const nlohmann::json kHybrid = {{"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 16},
                                {"linear_value_head_dim", 16}, {"linear_num_key_heads", 2},
                                {"linear_num_value_heads", 4}};

TEST(FamilyModules, TraitsAreTheFamilysLayerMakeUp) {
  const TargetConfig qwen3 = parsed("qwen3");
  EXPECT_EQ(qwen3.traits.norm, NormKind::Plain);
  EXPECT_TRUE(qwen3.traits.qkNorm);
  EXPECT_TRUE(qwen3.traits.fixedTensorLayout);

  const TargetConfig llama = parsed("llama");
  EXPECT_EQ(llama.traits.norm, NormKind::Plain);
  EXPECT_FALSE(llama.traits.qkNorm);  // LlamaAttention has no q_norm / k_norm

  const TargetConfig qwen35 = parsed("qwen3_5_text", kHybrid);
  EXPECT_EQ(qwen35.traits.norm, NormKind::ZeroCentred);
  EXPECT_TRUE(qwen35.traits.qkNorm);
  EXPECT_EQ(qwen35.rope.partialRotaryFactor, 0.25);

  nlohmann::json next = kHybrid;
  next.update({{"num_experts", 0}});
  EXPECT_FALSE(parsed("qwen3_next", next).traits.fixedTensorLayout);

  const TargetConfig oss = parsed("gpt_oss", {{"num_local_experts", 4}});
  EXPECT_EQ(oss.traits.norm, NormKind::Fp32Weight);
  EXPECT_EQ(oss.traits.mlp, MlpKind::GptOssExperts);
  EXPECT_FALSE(oss.traits.qkNorm);
  EXPECT_TRUE(oss.attentionSinks);
  EXPECT_EQ(oss.rope.type, "yarn");  // GptOssConfig's rope when the file has none

  const TargetConfig minimax = parsed("minimax_m2", {{"num_local_experts", 8}, {"rotary_dim", 8}});
  EXPECT_EQ(minimax.traits.norm, NormKind::Plain);
  EXPECT_TRUE(minimax.traits.qkNorm && minimax.traits.qkNormAcrossHeads);  // MiniMaxM2Attention's q_norm [heads * head_dim]
  EXPECT_EQ(minimax.rope.partialRotaryFactor, 0.5);                         // rotary_dim / head_dim
  EXPECT_EQ(minimax.rope.theta, 5000000.0);                                  // MiniMaxM2Config.default_theta
  ASSERT_TRUE(minimax.moe);
  EXPECT_EQ(minimax.moe->scoring, RouterScoring::Sigmoid);
  EXPECT_EQ(minimax.moe->numExpertsPerToken, 8);
  // A flat partial_rotary_factor wins over rotary_dim, as in MiniMaxM2Config.
  EXPECT_EQ(parsed("minimax_m2", {{"num_local_experts", 8}, {"rotary_dim", 8}, {"partial_rotary_factor", 0.25}})
                .rope.partialRotaryFactor,
            0.25);

  const TargetConfig glm = parsed("glm4_moe", {{"n_routed_experts", 8}, {"moe_intermediate_size", 32}});
  EXPECT_FALSE(glm.traits.qkNorm);  // use_qk_norm defaults to false
  EXPECT_FALSE(glm.traits.attentionBiasOnOutput);
  EXPECT_EQ(glm.rope.partialRotaryFactor, 0.5);
  ASSERT_TRUE(glm.moe);
  EXPECT_EQ(glm.moe->mlpOnlyLayers, std::vector<int>{0});  // first_k_dense_replace 1
  EXPECT_EQ(glm.moe->sharedExpertIntermediateSize, 32);    // n_shared_experts 1
  EXPECT_FALSE(glm.moe->sharedExpertGated);
  EXPECT_TRUE(glm.moe->routerInFp32);
  EXPECT_TRUE(parsed("glm4_moe", {{"n_routed_experts", 8}, {"moe_intermediate_size", 32}, {"use_qk_norm", true}})
                  .traits.qkNorm);
}

// DeepseekV3Config's defaults and its latent attention fields; what it refuses names the field.
TEST(FamilyModules, DeepseekV3ReadsItsLatentAttention) {
  const nlohmann::json mla = {{"kv_lora_rank", 16}, {"qk_nope_head_dim", 16}, {"qk_rope_head_dim", 8},
                              {"v_head_dim", 12},   {"n_routed_experts", 16}, {"moe_intermediate_size", 32}};
  const TargetConfig deepseek = parsed("deepseek_v3", mla);
  ASSERT_TRUE(deepseek.latentAttention);
  EXPECT_EQ(deepseek.latentAttention->qLoraRank, 1536);  // absent: DeepseekV3Config's default
  EXPECT_TRUE(deepseek.latentAttention->ropeInterleave);
  EXPECT_EQ(deepseek.headDim, 8);  // head_dim 16 in the file; transformers sets qk_rope_head_dim
  EXPECT_EQ(deepseek.rope.rotaryDim(deepseek.headDim), 8);
  ASSERT_TRUE(deepseek.moe);
  EXPECT_EQ(deepseek.moe->numGroups, 8);
  EXPECT_EQ(deepseek.moe->topkGroups, 4);
  EXPECT_DOUBLE_EQ(deepseek.moe->routedScalingFactor, 2.5);
  EXPECT_EQ(deepseek.moe->mlpOnlyLayers, (std::vector<int>{0, 1, 2}));

  auto problem = [&](const std::string& modelType, nlohmann::json extra) {
    try {
      parsed(modelType, extra);
    } catch (const ConfigValidationError& e) {
      return e.problems().at(0).field + ": " + e.problems().at(0).message;
    }
    return std::string("accepted");
  };
  nlohmann::json odd = mla;
  odd["qk_rope_head_dim"] = 7;
  EXPECT_EQ(problem("deepseek_v3", odd), "qk_rope_head_dim: 7 is odd: rotary channels come in pairs");
  // Absent fields take DeepseekV3Config's defaults; a null q_lora_rank is a full-rank q_proj.
  const TargetConfig defaults = parsed("deepseek_v3", {{"moe_intermediate_size", 32}});
  EXPECT_EQ(*defaults.latentAttention, (LatentAttention{.qLoraRank = 1536,
                                                        .kvLoraRank = 512,
                                                        .qkNopeHeadDim = 128,
                                                        .qkRopeHeadDim = 64,
                                                        .vHeadDim = 128,
                                                        .ropeInterleave = true}));
  nlohmann::json fullRank = mla;
  fullRank["q_lora_rank"] = nullptr;
  EXPECT_EQ(parsed("deepseek_v3", fullRank).latentAttention->qLoraRank, 0);
  // GLM-5's attention always has the q LoRA.
  EXPECT_EQ(problem("glm_moe_dsa", fullRank), "q_lora_rank: must be a rank: this family has no full-rank query");
  // Kimi K2.5's text_config is a deepseek_v3 config, spelled "kimi_k2" in the published files.
  nlohmann::json text = mla;
  text.update({{"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 4}, {"num_attention_heads", 4},
               {"vocab_size", 256}, {"model_type", "kimi_k2"}});
  EXPECT_EQ(parseTargetConfigText(nlohmann::json{{"model_type", "kimi_k25"}, {"text_config", text}}.dump(), "k25")
                .latentAttention,
            deepseek.latentAttention);
  text["model_type"] = "qwen3";
  EXPECT_EQ(problem("kimi_k25", {{"text_config", text}}),
            "text_config.model_type: expected one of \"deepseek_v3\", \"kimi_k2\", found \"qwen3\"");
}

TEST(FamilyModules, GroupLimitedRoutingThatCannotChooseIsRefused) {
  const nlohmann::json experts = {{"n_routed_experts", 8}, {"moe_intermediate_size", 32}};
  auto problemField = [&](nlohmann::json extra) {
    extra.update(experts);
    try {
      parsed("glm4_moe", extra);
    } catch (const ConfigValidationError& e) {
      return e.problems().at(0).field;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(problemField({{"n_group", 3}}), "n_group");              // 8 experts in 3 groups
  EXPECT_EQ(problemField({{"n_group", 8}, {"topk_group", 4}}), "n_group");  // one expert a group
  EXPECT_EQ(problemField({{"n_group", 2}, {"topk_group", 3}}), "topk_group");
  EXPECT_EQ(problemField({{"n_group", 4}, {"topk_group", 1}, {"num_experts_per_tok", 3}}), "num_experts_per_tok");
  EXPECT_EQ(problemField({{"n_group", 4}, {"topk_group", 2}, {"num_experts_per_tok", 4}}), "accepted");
  // Gemma4TextConfig's defaults where the file is silent: five sliding layers to one full (the
  // last always full), global_head_dim 512 on full layers, each type's own rope, tied
  // embeddings and per-layer inputs of 256.
  const TargetConfig gemma = parsed("gemma4_text", {{"num_hidden_layers", 7}});
  EXPECT_EQ(gemma.traits.norm, NormKind::Fp32Compute);  // Gemma4RMSNorm: x * w, not x * (1 + w)
  EXPECT_EQ(gemma.traits.mlp, MlpKind::Gemma4);
  EXPECT_EQ(gemma.traits.activation, MlpActivation::GeluTanh);
  EXPECT_TRUE(gemma.traits.qkNorm && gemma.traits.sandwichNorms && gemma.traits.scaledEmbeddings &&
              gemma.traits.unitAttentionScale && gemma.traits.valueNorm);
  EXPECT_FALSE(gemma.traits.fixedTensorLayout);
  const std::vector<LayerType> expected{LayerType::SlidingAttention, LayerType::SlidingAttention,
                                        LayerType::SlidingAttention, LayerType::SlidingAttention,
                                        LayerType::SlidingAttention, LayerType::FullAttention,
                                        LayerType::FullAttention};
  EXPECT_EQ(gemma.layerTypes, expected);
  EXPECT_EQ(gemma.slidingWindow, 512);
  EXPECT_EQ(gemma.attentionShape(0), (AttentionShape{16, 2}));
  EXPECT_EQ(gemma.attentionShape(5), (AttentionShape{512, 2}));
  EXPECT_EQ(gemma.rope.type, "proportional");
  EXPECT_EQ(gemma.rope.theta, 1e6);
  ASSERT_TRUE(gemma.slidingRope);
  EXPECT_EQ(gemma.ropeOf(0).theta, 10000);
  EXPECT_EQ(gemma.ropeOf(5).type, "proportional");
  EXPECT_TRUE(gemma.tieWordEmbeddings);
  ASSERT_TRUE(gemma.perLayerInputs);
  EXPECT_EQ(gemma.perLayerInputs->hiddenSize, 256);
  EXPECT_FALSE(gemma.moe);
  // attention_k_eq_v gives the full layers num_global_key_value_heads; enable_moe_block experts.
  const TargetConfig moe = parsed("gemma4_text", {{"attention_k_eq_v", true}, {"num_global_key_value_heads", 1},
                                                  {"hidden_size_per_layer_input", 0}, {"enable_moe_block", true},
                                                  {"num_experts", 8}, {"top_k_experts", 2},
                                                  {"moe_intermediate_size", 32}});
  EXPECT_EQ(moe.attentionShape(3), (AttentionShape{512, 1}));
  EXPECT_FALSE(moe.perLayerInputs);
  ASSERT_TRUE(moe.moe);
  EXPECT_EQ(moe.moe->numExperts, 8);
  EXPECT_EQ(moe.moe->numExpertsPerToken, 2);
}

TEST(FamilyModules, QuantizationIsAcceptedOnlyWhereTheModuleDequantisesIt) {
  EXPECT_TRUE(parsed("gpt_oss", {{"num_local_experts", 4}, {"quantization_config", {{"quant_method", "mxfp4"}}}})
                  .quantization);
  EXPECT_THROW(parsed("qwen3", {{"quantization_config", {{"quant_method", "mxfp4"}}}}), dfi::modelspec::ConfigValidationError);
}

// The field table lists every member once under config.json's own key: a member left out of
// the table would keep its value here instead of taking the one written through the table.
TEST(DecoderGeometry, FieldTableCoversEveryMemberOnce) {
  DecoderGeometry written;
  int next = 1;
  std::set<std::string_view> keys;
  for (const GeometryField& field : kGeometryFields) {
    EXPECT_TRUE(keys.insert(field.key).second) << field.key;
    std::visit(
        [&](auto member) {
          using Value = std::remove_reference_t<decltype(written.*member)>;
          written.*member = std::is_same_v<Value, bool> ? Value(true) : Value(next++);
        },
        field.member);
  }
  const DecoderGeometry expected{.hiddenSize = 1,
                                 .intermediateSize = 2,
                                 .numHiddenLayers = 3,
                                 .numAttentionHeads = 4,
                                 .numKeyValueHeads = 5,
                                 .headDim = 6,
                                 .vocabSize = 7,
                                 .rmsNormEps = 8,
                                 .attentionBias = true,
                                 .maxPositionEmbeddings = 9};
  EXPECT_EQ(written.hiddenSize, expected.hiddenSize);
  EXPECT_EQ(written.intermediateSize, expected.intermediateSize);
  EXPECT_EQ(written.numHiddenLayers, expected.numHiddenLayers);
  EXPECT_EQ(written.numAttentionHeads, expected.numAttentionHeads);
  EXPECT_EQ(written.numKeyValueHeads, expected.numKeyValueHeads);
  EXPECT_EQ(written.headDim, expected.headDim);
  EXPECT_EQ(written.vocabSize, expected.vocabSize);
  EXPECT_EQ(written.rmsNormEps, expected.rmsNormEps);
  EXPECT_EQ(written.attentionBias, expected.attentionBias);
  EXPECT_EQ(written.maxPositionEmbeddings, expected.maxPositionEmbeddings);
}

}  // namespace
}  // namespace dfi::modelspec
