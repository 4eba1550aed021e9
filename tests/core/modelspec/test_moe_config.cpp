// Mixture-of-experts fields of target configs, read as each family's transformers config class
// reads them: Qwen3-MoE (num_experts or its alias num_local_experts, norm_topk_prob false by
// default, decoder_sparse_step / mlp_only_layers), Qwen3.5-MoE (every layer sparse with a shared
// expert, top-k always renormalised, no intermediate_size) and Qwen3-Next (norm_topk_prob true
// by default, a shared expert, num_experts 0 for dense MLPs).

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config_test_util.h"
#include "dfi/modelspec/target_config.h"

namespace dfi::modelspec {
namespace {

using ::testing::HasSubstr;
using testing::configFixture;
using testing::problemAt;
using testing::fixtureJson;
using testing::parseTarget;
using testing::targetProblems;


// Qwen3-30B-A3B's geometry (Qwen3-Coder-30B-A3B has the same), as its config.json spells it.
nlohmann::json qwen3_30b_a3b() {
  return {{"architectures", {"Qwen3MoeForCausalLM"}}, {"model_type", "qwen3_moe"}, {"hidden_size", 2048},
          {"intermediate_size", 6144}, {"num_hidden_layers", 48}, {"num_attention_heads", 32},
          {"num_key_value_heads", 4}, {"head_dim", 128}, {"vocab_size", 151936}, {"rms_norm_eps", 1e-6},
          {"rope_theta", 1000000.0}, {"max_position_embeddings", 40960}, {"num_experts", 128},
          {"num_experts_per_tok", 8}, {"moe_intermediate_size", 768}, {"norm_topk_prob", true},
          {"decoder_sparse_step", 1}, {"mlp_only_layers", nlohmann::json::array()},
          {"use_sliding_window", false}, {"sliding_window", nullptr}, {"max_window_layers", 48},
          {"tie_word_embeddings", false}, {"eos_token_id", 151645}};
}

// Qwen3.5-35B-A3B: the Qwen3.6-27B fixture's nesting with transformers' Qwen3_5MoeTextConfig
// defaults (the 35B-A3B geometry).
nlohmann::json qwen3_5_35b_a3b() {
  std::ifstream in(configFixture("qwen3_6_27b.json"));
  nlohmann::json j = nlohmann::json::parse(in);
  j["model_type"] = "qwen3_5_moe";
  j["architectures"] = {"Qwen3_5MoeForConditionalGeneration"};
  nlohmann::json& t = j["text_config"];
  t["model_type"] = "qwen3_5_moe_text";
  t.erase("intermediate_size");
  t.erase("layer_types");
  t.update({{"hidden_size", 2048}, {"num_hidden_layers", 40}, {"num_attention_heads", 16}, {"num_key_value_heads", 2},
            {"linear_num_value_heads", 32}, {"num_experts", 256}, {"num_experts_per_tok", 8},
            {"moe_intermediate_size", 512}, {"shared_expert_intermediate_size", 512}, {"full_attention_interval", 4}});
  return j;
}

std::vector<int> sparseLayers(const TargetConfig& c) {
  std::vector<int> out;
  for (int i = 0; i < c.numHiddenLayers; ++i)
    if (c.moe->moeLayer(i)) out.push_back(i);
  return out;
}

TEST(MoeConfig, Qwen3_30B_A3B) {
  const TargetConfig c = parseTarget(qwen3_30b_a3b());
  EXPECT_EQ(c.family, TargetFamily::Qwen3);
  EXPECT_EQ(c.modelType, "qwen3_moe");
  ASSERT_TRUE(c.moe);
  EXPECT_EQ(c.moe->numExperts, 128);
  EXPECT_EQ(c.moe->numExpertsPerToken, 8);
  EXPECT_EQ(c.moe->moeIntermediateSize, 768);
  EXPECT_FALSE(c.moe->hasSharedExpert());
  EXPECT_TRUE(c.moe->normTopkProb);
  EXPECT_EQ(sparseLayers(c).size(), 48u);
}

TEST(MoeConfig, Qwen3MoeReadsTheAliasSavePretrainedWrites) {
  nlohmann::json j = qwen3_30b_a3b();
  j.erase("num_experts");
  j.erase("norm_topk_prob");  // Qwen3MoeConfig's default: false
  j["num_local_experts"] = 64;
  const TargetConfig c = parseTarget(j);
  EXPECT_EQ(c.moe->numExperts, 64);
  EXPECT_FALSE(c.moe->normTopkProb);
  j["num_experts"] = 64;
  EXPECT_THAT(problemAt(targetProblems(j), "num_local_experts").message, HasSubstr("both num_experts and num_local_experts"));
}

TEST(MoeConfig, SparseStepAndDenseLayersFollowTransformersRule) {
  nlohmann::json j = qwen3_30b_a3b();
  j["num_hidden_layers"] = 8;
  j["decoder_sparse_step"] = 2;
  j["mlp_only_layers"] = {3, 5};
  EXPECT_EQ(sparseLayers(parseTarget(j)), (std::vector<int>{1, 7}));  // (i + 1) % 2 == 0, not 3 or 5
  j["mlp_only_layers"] = {8};
  j["decoder_sparse_step"] = 0;
  const auto p = targetProblems(j);
  EXPECT_THAT(problemAt(p, "mlp_only_layers").message, HasSubstr("layer 8 is not below num_hidden_layers 8"));
  problemAt(p, "decoder_sparse_step");
}

TEST(MoeConfig, ExpertFieldsAreRequiredAndChecked) {
  nlohmann::json j = qwen3_30b_a3b();
  j["num_experts_per_tok"] = 200;
  j.erase("moe_intermediate_size");
  const auto p = targetProblems(j);
  EXPECT_THAT(problemAt(p, "num_experts_per_tok").message, HasSubstr("200 exceeds num_experts 128"));
  EXPECT_THAT(problemAt(p, "moe_intermediate_size").message, HasSubstr("required"));
  j = qwen3_30b_a3b();
  j["num_experts"] = 0;  // a Qwen3-MoE has experts; only Qwen3-Next spells dense MLPs this way
  problemAt(targetProblems(j), "num_experts");
}

TEST(MoeConfig, Qwen3_5_35B_A3B_IsSparseEverywhereWithASharedExpert) {
  nlohmann::json j = qwen3_5_35b_a3b();
  // Fields Qwen3_5MoeTextConfig does not have: transformers ignores them, and so does the engine.
  j["text_config"].update({{"decoder_sparse_step", 2}, {"mlp_only_layers", {0}}, {"norm_topk_prob", false}});
  const TargetConfig c = parseTarget(j);
  EXPECT_EQ(c.family, TargetFamily::Qwen3_5);
  EXPECT_EQ(c.intermediateSize, 0);
  EXPECT_EQ(c.numLayersOfType(LayerType::LinearAttention), 30);
  ASSERT_TRUE(c.moe);
  EXPECT_EQ(c.moe->numExperts, 256);
  EXPECT_EQ(c.moe->sharedExpertIntermediateSize, 512);
  EXPECT_TRUE(c.moe->normTopkProb);
  EXPECT_EQ(sparseLayers(c).size(), 40u);
}

TEST(MoeConfig, Qwen3_5MoeTextLevelAndArchitectures) {
  nlohmann::json j = qwen3_5_35b_a3b();
  j["text_config"]["model_type"] = "qwen3_5_text";
  j["architectures"] = {"Qwen3_5ForConditionalGeneration"};
  const auto p = targetProblems(j);
  EXPECT_THAT(problemAt(p, "text_config.model_type").message, HasSubstr("expected \"qwen3_5_moe_text\""));
  EXPECT_THAT(problemAt(p, "architectures[0]").message,
              HasSubstr("supported: Qwen3_5MoeForConditionalGeneration, Qwen3_5MoeForCausalLM"));
  // What Qwen3_5MoeForCausalLM.save_pretrained writes: the text level alone, flat.
  nlohmann::json flat = qwen3_5_35b_a3b()["text_config"];
  flat["architectures"] = {"Qwen3_5MoeForCausalLM"};
  EXPECT_EQ(parseTarget(flat).moe->numExperts, 256);
}

TEST(MoeConfig, Qwen3NextRenormalisesByDefaultAndKeepsDenseWithoutExperts) {
  const nlohmann::json next = {{"architectures", {"Qwen3NextForCausalLM"}}, {"model_type", "qwen3_next"},
                               {"hidden_size", 2048}, {"intermediate_size", 5120}, {"num_hidden_layers", 48},
                               {"num_attention_heads", 16}, {"num_key_value_heads", 2}, {"head_dim", 256},
                               {"vocab_size", 151936}, {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 128},
                               {"linear_value_head_dim", 128}, {"linear_num_key_heads", 16},
                               {"linear_num_value_heads", 32}, {"num_experts", 512}, {"num_experts_per_tok", 10},
                               {"moe_intermediate_size", 512}, {"shared_expert_intermediate_size", 512}};
  const TargetConfig c = parseTarget(next);
  EXPECT_TRUE(c.moe->normTopkProb);
  EXPECT_TRUE(c.moe->hasSharedExpert());
  nlohmann::json dense = next;
  dense["num_experts"] = 0;
  EXPECT_FALSE(parseTarget(dense).moe);
}

}  // namespace
}  // namespace dfi::modelspec
