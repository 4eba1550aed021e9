// DFlash drafter configs: the published z-lab shapes, the flat/nested block size rule, the
// default target-layer taps, and each validation error.

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config_test_util.h"
#include "dfi/modelspec/drafter_config.h"

namespace dfi::modelspec {
namespace {

using ::testing::HasSubstr;
using testing::configFixture;
using testing::problemAt;
using testing::fixtureJson;
using testing::problemsOf;

DrafterConfig parseDrafter(const nlohmann::json& j, std::optional<int> targetLayers = {}) {
  return parseDrafterConfigText(j.dump(), "config.json", targetLayers);
}

std::vector<ConfigProblem> drafterProblems(const nlohmann::json& j, std::optional<int> targetLayers = {}) {
  return problemsOf([&] { parseDrafter(j, targetLayers); });
}

TEST(DrafterConfig, ZLabQwen3_8B_b16) {
  const DrafterConfig c = parseDrafterConfig(configFixture("zlab_qwen3_8b_dflash_b16.json"));
  EXPECT_EQ(c.hiddenSize, 4096);
  EXPECT_EQ(c.numHiddenLayers, 5);
  EXPECT_EQ(c.numAttentionHeads, 32);
  EXPECT_EQ(c.numKeyValueHeads, 8);
  EXPECT_EQ(c.headDim, 128);
  EXPECT_EQ(c.intermediateSize, 12288);
  EXPECT_EQ(c.blockSize, 16);
  EXPECT_EQ(c.targetLayerIds, (std::vector<int>{1, 9, 17, 25, 33}));
  EXPECT_TRUE(c.targetLayerIdsFromConfig);
  EXPECT_EQ(c.maskTokenId, 151669);
  EXPECT_EQ(c.numTargetLayers, 36);
  EXPECT_EQ(c.rope.type, "default");
  EXPECT_EQ(c.rope.theta, 1e6);
  EXPECT_EQ(c.layerTypes, std::vector<LayerType>(5, LayerType::FullAttention));
  EXPECT_FALSE(c.slidingWindow);
}

TEST(DrafterConfig, ZLabQwen3_6_27BHasSlidingLayers) {
  const DrafterConfig c = parseDrafterConfig(configFixture("zlab_qwen3_6_27b_dflash.json"));
  EXPECT_EQ(c.hiddenSize, 5120);
  EXPECT_EQ(c.intermediateSize, 17408);
  EXPECT_EQ(c.targetLayerIds, (std::vector<int>{1, 16, 31, 46, 61}));
  EXPECT_EQ(c.maskTokenId, 248070);
  EXPECT_EQ(c.rope.theta, 1e7);
  const auto S = LayerType::SlidingAttention;
  EXPECT_EQ(c.layerTypes, (std::vector<LayerType>{S, S, S, S, LayerType::FullAttention}));
  EXPECT_EQ(c.slidingWindow, 2048);
}

TEST(DrafterConfig, PublishedConfigsHaveNoWarnings) {
  for (const char* name : {"zlab_qwen3_8b_dflash_b16.json", "zlab_qwen3_6_27b_dflash.json"}) {
    const DrafterConfig c = parseDrafterConfig(configFixture(name));
    EXPECT_TRUE(c.warnings.empty()) << name << ": " << c.warnings.front().field;
    EXPECT_EQ(c.inputEmbeddingScale, 1.0);
    EXPECT_EQ(c.outputMultiplier, 1.0);
    EXPECT_FALSE(c.finalLogitSoftcapping);
    EXPECT_FALSE(c.isCausal);
  }
}

// dflash 0.1.0's _draft_value: dflash_config first, then the top level.
TEST(DrafterConfig, DflashFieldsNestedOrFlat) {
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j["dflash_config"]["input_embedding_scale"] = 1.5;
  j["input_embedding_scale"] = 9.0;  // the nested value wins, as in the package
  j["output_multiplier"] = 0.25;
  j["dflash_config"]["final_logit_softcapping"] = 30;
  j["is_causal"] = true;
  DrafterConfig c = parseDrafter(j);
  EXPECT_EQ(c.inputEmbeddingScale, 1.5);
  EXPECT_EQ(c.outputMultiplier, 0.25);
  EXPECT_EQ(c.finalLogitSoftcapping, 30.0);
  EXPECT_EQ(c.isCausal, true);
  EXPECT_TRUE(c.warnings.empty());
  j["dflash_config"]["final_logit_softcapping"] = 0;  // <= 0: no cap
  EXPECT_FALSE(parseDrafter(j).finalLogitSoftcapping);
  j["dflash_config"].erase("target_layer_ids");
  j["target_layer_ids"] = {2, 4};  // the package's top-level fallback
  c = parseDrafter(j);
  EXPECT_EQ(c.targetLayerIds, (std::vector<int>{2, 4}));
  EXPECT_TRUE(c.targetLayerIdsFromConfig);
}

TEST(DrafterConfig, UnknownFieldsAreWarnedByName) {
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j["dflash_config"]["causal"] = true;  // vLLM's spelling: not what dflash reads
  j["draft_vocab_size"] = 32000;
  const DrafterConfig c = parseDrafter(j);
  std::vector<std::string> fields;
  for (const auto& w : c.warnings) fields.push_back(w.field);
  EXPECT_THAT(fields, ::testing::UnorderedElementsAre("dflash_config.causal", "draft_vocab_size"));
  EXPECT_THAT(c.warnings.front().message, HasSubstr("not a field the engine knows"));
}

TEST(DrafterConfig, SlidingLayersWithoutUseSlidingWindowAreWarned) {
  nlohmann::json j = fixtureJson("zlab_qwen3_6_27b_dflash.json");
  j["use_sliding_window"] = false;
  const DrafterConfig c = parseDrafter(j);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0].field, "use_sliding_window");
  EXPECT_THAT(c.warnings[0].message, HasSubstr("without a window"));
  EXPECT_EQ(c.slidingWindow, 2048);
}

TEST(DrafterConfig, BlockSizeFlatOrNestedMustAgree) {
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j.erase("block_size");
  j["dflash_config"]["block_size"] = 8;
  EXPECT_EQ(parseDrafter(j).blockSize, 8);
  j["block_size"] = 8;
  EXPECT_EQ(parseDrafter(j).blockSize, 8);
  j["block_size"] = 16;
  EXPECT_THAT(problemAt(drafterProblems(j), "dflash_config.block_size").message,
              HasSubstr("8 disagrees with top-level block_size 16"));
  j.erase("block_size");
  j["dflash_config"].erase("block_size");
  EXPECT_EQ(parseDrafter(j).blockSize, 16);  // SGLang's default
  j["block_size"] = 1;
  EXPECT_THAT(problemAt(drafterProblems(j), "block_size").message, HasSubstr("at least 2"));
}

TEST(DrafterConfig, DefaultTapsComeFromNumTargetLayersOrTheCaller) {
  nlohmann::json j = fixtureJson("zlab_qwen3_6_27b_dflash.json");
  j["dflash_config"].erase("target_layer_ids");
  DrafterConfig c = parseDrafter(j);
  EXPECT_EQ(c.targetLayerIds, (std::vector<int>{1, 16, 31, 46, 61}));
  EXPECT_FALSE(c.targetLayerIdsFromConfig);
  j.erase("num_target_layers");
  EXPECT_EQ(parseDrafter(j, 36).targetLayerIds, (std::vector<int>{1, 9, 17, 25, 33}));
  EXPECT_EQ(parseDrafter(j, 36).numTargetLayers, 36);
  EXPECT_THAT(problemAt(drafterProblems(j), "dflash_config.target_layer_ids").message,
              HasSubstr("target depth for the default rule is unknown"));
}

TEST(DrafterConfig, DefaultRuleRoundsHalfToEven) {
  // L=10, n=5: positions 1, 2.5, 4, 5.5, 7 -> 2.5 rounds to 2 and 5.5 to 6.
  EXPECT_EQ(defaultTargetLayerIds(10, 5), (std::vector<int>{1, 2, 4, 6, 7}));
  EXPECT_EQ(defaultTargetLayerIds(36, 1), std::vector<int>{18});
  EXPECT_EQ(defaultTargetLayerIds(64, 5), (std::vector<int>{1, 16, 31, 46, 61}));
}

TEST(DrafterConfig, TapsMustBeDistinctAndInsideTheTarget) {
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j["dflash_config"]["target_layer_ids"] = {1, 9, 9, 40};
  const auto p = drafterProblems(j);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_THAT(p[0].message, HasSubstr("target layer 9 is listed twice"));
  EXPECT_THAT(p[1].message, HasSubstr("target layer 40 is outside [0, 36)"));
  j["dflash_config"]["target_layer_ids"] = {1, -2};
  EXPECT_THAT(problemAt(drafterProblems(j), "dflash_config.target_layer_ids[1]").message, HasSubstr("at least 0"));
}

TEST(DrafterConfig, MaskTokenIdFlatAndNestedMustAgree) {
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j["mask_token_id"] = 151670;
  EXPECT_THAT(problemAt(drafterProblems(j), "dflash_config.mask_token_id").message,
              HasSubstr("151669 disagrees with top-level mask_token_id 151670"));
  j.erase("mask_token_id");
  j["dflash_config"].erase("mask_token_id");
  EXPECT_FALSE(parseDrafter(j).maskTokenId);
}

TEST(DrafterConfig, SlidingLayersNeedAWindowAndTheRightLength) {
  nlohmann::json j = fixtureJson("zlab_qwen3_6_27b_dflash.json");
  j.erase("sliding_window");
  EXPECT_THAT(problemAt(drafterProblems(j), "sliding_window").message, HasSubstr("sliding_attention layers"));
  j = fixtureJson("zlab_qwen3_6_27b_dflash.json");
  j["layer_types"].push_back("full_attention");
  EXPECT_THAT(problemAt(drafterProblems(j), "layer_types").message, HasSubstr("has 6 entries but num_hidden_layers is 5"));
}

TEST(DrafterConfig, YarnRopeIsRead) {
  nlohmann::json j = fixtureJson("zlab_qwen3_6_27b_dflash.json");
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 64.0}, {"original_max_position_embeddings", 4096}};
  const DrafterConfig c = parseDrafter(j);
  EXPECT_EQ(c.rope.type, "yarn");
  EXPECT_EQ(c.rope.factor, 64.0);
  EXPECT_EQ(c.rope.originalMaxPositionEmbeddings, 4096);
  EXPECT_EQ(c.rope.theta, 1e7);
}

TEST(DrafterConfig, NotADrafterOrAnUnsupportedOne) {
  EXPECT_THAT(problemAt(problemsOf([] { parseDrafterConfig(configFixture("qwen3_8b.json")); }), "architectures[0]")
                  .message,
              HasSubstr("unsupported drafter architecture \"Qwen3ForCausalLM\" (supported: DFlashDraftModel, DFlash2DraftModel, DSparkDraftModel)"));
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j.erase("architectures");
  j.erase("dflash_config");
  j.erase("block_size");
  EXPECT_THAT(problemAt(drafterProblems(j, 36), "architectures").message, HasSubstr("not a DFlash drafter config"));
  j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j["model_type"] = "llama";
  EXPECT_THAT(problemAt(drafterProblems(j), "model_type").message, HasSubstr("supported drafter model_type: qwen3"));
}

TEST(DrafterConfig, HeadGeometryIsChecked) {
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j["num_key_value_heads"] = 6;
  j.erase("head_dim");
  const auto p = drafterProblems(j);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_THAT(problemAt(p, "num_key_value_heads").message, HasSubstr("6 does not divide num_attention_heads 32"));
  EXPECT_THAT(problemAt(p, "head_dim").message, HasSubstr("required"));
}

// speculators 0.9.0's DFlashSpeculatorConfig.save_pretrained for the z-lab Qwen3-8B drafter's
// layers (tests/data/configs/speculators_qwen3_8b_dflash.json, written by the package), with the
// taps speculators' converter gives it (z-lab's + 1) and the default 32000-id draft vocabulary.
TEST(SpeculatorsDrafterConfig, PackageWrittenQwen3_8B) {
  const DrafterConfig c = parseDrafterConfig(configFixture("speculators_qwen3_8b_dflash.json"), 36);
  const DrafterConfig zlab = parseDrafterConfig(configFixture("zlab_qwen3_8b_dflash_b16.json"));
  EXPECT_EQ(c.format, DrafterFormat::Speculators);
  EXPECT_EQ(c.targetLayerIds, zlab.targetLayerIds);
  EXPECT_EQ(c.speculators->auxHiddenStateLayerIds, (std::vector<int>{2, 10, 18, 26, 34}));
  EXPECT_EQ(c.hiddenSize, zlab.hiddenSize);
  EXPECT_EQ(c.numHiddenLayers, zlab.numHiddenLayers);
  EXPECT_EQ(c.headDim, zlab.headDim);
  EXPECT_EQ(c.rope.theta, zlab.rope.theta);
  EXPECT_EQ(c.maskTokenId, zlab.maskTokenId);
  EXPECT_EQ(c.blockSize, 16);
  EXPECT_EQ(c.draftVocabSize, 32000);
  EXPECT_EQ(c.vocabSize, 151936);
  EXPECT_EQ(c.speculators->speculativeTokens, 15);
  EXPECT_EQ(c.speculators->verifierNameOrPath, "Qwen/Qwen3-8B");
  EXPECT_EQ(c.speculators->proposalType, "greedy");
  EXPECT_FALSE(c.isCausal.has_value());
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front().field << ": " << c.warnings.front().message;
}

nlohmann::json speculatorsConfig() { return fixtureJson("speculators_qwen3_8b_dflash.json"); }

// SpecForge 0.2.0's DSparkDraftModel in z-lab's layout: dflash_config.projector_type "dspark"
// and its heads' keys, with its defaults (build_markov_head, _init_draft_head).
TEST(DrafterConfig, SpecforgeDsparkReadsItsHeadsWithItsDefaults) {
  nlohmann::json j = fixtureJson("zlab_qwen3_8b_dflash_b16.json");
  j["architectures"] = {"DSparkDraftModel"};
  j["dflash_config"]["projector_type"] = "dspark";
  j["dflash_config"]["attention_mode"] = "gqa";
  DrafterConfig plain = parseDrafter(j);
  ASSERT_TRUE(plain.dspark.has_value());
  EXPECT_EQ(plain.dspark->markovRank, 0);           // no Markov head unless markov_rank says
  EXPECT_FALSE(plain.dspark->confidenceHead);       // confidence_head_alpha 0
  EXPECT_FALSE(plain.dspark->confidenceWithMarkov);
  EXPECT_FALSE(plain.dspark->rnnStepsOverAnchorRow);  // SpecForge's rnn starts at the first draft
  EXPECT_FALSE(plain.sampleFromAnchor);
  EXPECT_TRUE(plain.warnings.empty()) << plain.warnings.front().field;

  j["dflash_config"]["markov_rank"] = 32;
  j["dflash_config"]["markov_head_type"] = "rnn";
  j["dflash_config"]["confidence_head_alpha"] = 0.5;
  const DrafterConfig heads = parseDrafter(j);
  EXPECT_EQ(heads.dspark->markovRank, 32);
  EXPECT_EQ(heads.dspark->markovHeadType, MarkovHeadType::Rnn);
  EXPECT_TRUE(heads.dspark->confidenceHead);

  j["dflash_config"]["markov_head_type"] = "lstm";
  EXPECT_THAT(problemAt(drafterProblems(j, 36), "dflash_config.markov_head_type").message,
              HasSubstr("not one of vanilla, gated, rnn"));
  // Without projector_type dspark its keys are unknown fields.
  j["dflash_config"].erase("projector_type");
  j["dflash_config"]["markov_head_type"] = "rnn";
  std::vector<std::string> fields;
  for (const auto& w : parseDrafter(j).warnings) fields.push_back(w.field);
  EXPECT_THAT(fields, ::testing::Contains("dflash_config.markov_rank"));
}

TEST(SpeculatorsDrafterConfig, DefaultsAreTheConfigClasss) {
  nlohmann::json j = speculatorsConfig();
  j.erase("block_size");
  j.erase("draft_vocab_size");
  const DrafterConfig c = parseDrafter(j, 36);
  EXPECT_EQ(c.blockSize, 8);
  EXPECT_EQ(c.draftVocabSize, 32000);
  j["draft_vocab_size"] = 151936;  // the target's: no mapping, the target's LM head
  EXPECT_FALSE(parseDrafter(j, 36).draftVocabSize.has_value());
}

TEST(SpeculatorsDrafterConfig, Dflash2TakesTheConfigClasssDefaults) {
  nlohmann::json j = speculatorsConfig();
  j["speculators_model_type"] = "dflash2";
  j["draft_vocab_size"] = 151936;
  j.erase("sliding_window_non_causal");
  const DrafterConfig c = parseDrafter(j, 36);
  ASSERT_TRUE(c.dflash2.has_value());
  EXPECT_EQ(c.dflash2->convKernelSize, 2);
  EXPECT_EQ(c.dflash2->convGroupSize, 16);
  EXPECT_EQ(c.dflash2->selectorRank, 256);
  EXPECT_EQ(c.dflash2->selectorTopK, 16);
  EXPECT_EQ(c.isCausal, false);  // sliding_window_non_causal defaults to true for DFlash2
  EXPECT_FALSE(c.draftVocabSize.has_value());
}

TEST(SpeculatorsDrafterConfig, SlidingWindowNonCausalMakesEveryLayerNonCausal) {
  nlohmann::json j = speculatorsConfig();
  j["transformer_layer_config"]["layer_types"] = {"sliding_attention", "sliding_attention", "sliding_attention",
                                                  "sliding_attention", "full_attention"};
  j["transformer_layer_config"]["sliding_window"] = 2048;
  j["transformer_layer_config"]["use_sliding_window"] = true;
  EXPECT_FALSE(parseDrafter(j, 36).isCausal.has_value());  // sliding causal, full non-causal
  j["sliding_window_non_causal"] = true;
  EXPECT_EQ(parseDrafter(j, 36).isCausal, false);
}

TEST(SpeculatorsDrafterConfig, EachProblemNamesItsField) {
  auto problem = [](const nlohmann::json& j, const std::string& field, const std::string& text) {
    EXPECT_THAT(problemAt(drafterProblems(j, 36), field).message, HasSubstr(text)) << field;
  };
  nlohmann::json j = speculatorsConfig();
  j["speculators_model_type"] = "eagle3";
  problem(j, "speculators_model_type", "not a speculators DFlash-family type");
  j["speculators_model_type"] = "dspark";
  j["markov_head_type"] = "lstm";
  problem(j, "markov_head_type", "\"lstm\" is not one of vanilla, gated, rnn");
  j["markov_head_type"] = "gated";
  j["markov_rank"] = 0;
  problem(j, "confidence_head_with_markov", "markov_rank is 0");
  j.erase("markov_rank");
  j.erase("markov_head_type");
  j["speculators_model_type"] = "dflash2";  // the package's DFlash2 scores the full vocabulary only
  problem(j, "draft_vocab_size", "requires the full verifier vocabulary");
  j["draft_vocab_size"] = 151936;
  j["conv_group_size"] = 3;
  j["conv_kernel_size"] = 17;
  problem(j, "conv_group_size", "does not divide hidden_size 4096");
  problem(j, "conv_kernel_size", "exceeds block_size 16");

  j = speculatorsConfig();
  j["speculators_model_type"] = "dflash2";
  j["draft_vocab_size"] = 151936;
  j["sample_from_anchor"] = true;
  problem(j, "sample_from_anchor", "true on a DFlash2 drafter");

  j = speculatorsConfig();
  j["aux_hidden_state_layer_ids"] = {0, 10, 18, 26, 34};
  problem(j, "aux_hidden_state_layer_ids", "embedding output");
  j["aux_hidden_state_layer_ids"] = {2, 10, 18, 26, 37};
  problem(j, "aux_hidden_state_layer_ids", "37 is outside [1, 36]");
  j.erase("aux_hidden_state_layer_ids");
  problem(j, "aux_hidden_state_layer_ids", "required");

  j = speculatorsConfig();
  j["draft_vocab_size"] = 200000;
  problem(j, "draft_vocab_size", "exceeds the target vocabulary");

  j = speculatorsConfig();
  j["transformer_layer_config"]["model_type"] = "llama";
  problem(j, "transformer_layer_config.model_type", "unsupported model_type");
  j["transformer_layer_config"].erase("hidden_size");
  EXPECT_FALSE(drafterProblems(j, 36).empty());
  j.erase("transformer_layer_config");
  problem(j, "transformer_layer_config", "required");
}

TEST(SpeculatorsDrafterConfig, DsparkReadsItsHeadsAndSamplesFromTheAnchorByDefault) {
  nlohmann::json j = speculatorsConfig();
  j["speculators_model_type"] = "dspark";
  j.erase("sample_from_anchor");
  j["markov_rank"] = 32;
  j["markov_head_type"] = "rnn";
  j["enable_confidence_head"] = false;
  j["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = 16;
  const DrafterConfig c = parseDrafter(j, 36);
  ASSERT_TRUE(c.dspark.has_value());
  EXPECT_EQ(c.dspark->markovRank, 32);
  EXPECT_EQ(c.dspark->markovHeadType, MarkovHeadType::Rnn);
  EXPECT_FALSE(c.dspark->confidenceHead);
  EXPECT_TRUE(c.sampleFromAnchor);  // DSparkSpeculatorConfig's default
  EXPECT_EQ(c.draftsPerBlock(), 16);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front().field << ": " << c.warnings.front().message;

  j["sample_from_anchor"] = false;  // then 15 drafts, and speculative_tokens 16 disagrees
  const DrafterConfig off = parseDrafter(j, 36);
  EXPECT_EQ(off.draftsPerBlock(), 15);
  ASSERT_EQ(off.warnings.size(), 1u);
  EXPECT_EQ(off.warnings.front().field, "speculators_config.proposal_methods");
}

TEST(SpeculatorsDrafterConfig, UnknownFieldsAreWarnedWherePutAndSpeculativeTokensChecked) {
  nlohmann::json j = speculatorsConfig();
  j["markov_rank"] = 64;
  j["transformer_layer_config"]["foo"] = 1;
  j["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = 7;
  std::vector<std::string> fields;
  for (const auto& w : parseDrafter(j, 36).warnings) fields.push_back(w.field);
  EXPECT_THAT(fields, ::testing::UnorderedElementsAre("markov_rank", "transformer_layer_config.foo",
                                                      "speculators_config.proposal_methods"));
}

}  // namespace
}  // namespace dfi::modelspec
