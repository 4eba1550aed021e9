// Validation of target configs: each rule, with the field path and values in the message,
// and every problem of a file reported at once.

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
using testing::problemsOf;
using testing::targetProblems;


TEST(TargetConfig, PublishedQwen3_8B) {
  const TargetConfig c = parseTargetConfig(configFixture("qwen3_8b.json"));
  EXPECT_EQ(c.family, TargetFamily::Qwen3);
  EXPECT_EQ(c.architectures, std::vector<std::string>{"Qwen3ForCausalLM"});
  EXPECT_EQ(c.hiddenSize, 4096);
  EXPECT_EQ(c.numHiddenLayers, 36);
  EXPECT_EQ(c.numLayersOfType(LayerType::FullAttention), 36);
  EXPECT_EQ(c.rope.theta, 1e6);
  EXPECT_EQ(c.rope.rotaryDim(c.headDim), 128);
  EXPECT_EQ(c.bosTokenId, 151643);
  EXPECT_FALSE(c.slidingWindow);
  EXPECT_THAT(c.rawJson, HasSubstr("Qwen3ForCausalLM"));
}

TEST(TargetConfig, PublishedQwen3_6_27BNestsTheTextConfig) {
  const TargetConfig c = parseTargetConfig(configFixture("qwen3_6_27b.json"));
  EXPECT_EQ(c.family, TargetFamily::Qwen3_5);
  EXPECT_EQ(c.hiddenSize, 5120);
  EXPECT_EQ(c.numLayersOfType(LayerType::FullAttention), 16);
  EXPECT_EQ(c.numLayersOfType(LayerType::LinearAttention), 48);
  EXPECT_EQ(c.rope.rotaryDim(c.headDim), 64);
  EXPECT_EQ(c.linearNumValueHeads, 48);
  EXPECT_EQ(c.eosTokenIds, std::vector<int>{248044});
}

TEST(TargetConfig, TopLevelTieFlagWinsForConditionalGeneration) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["tie_word_embeddings"] = true;
  j["text_config"]["tie_word_embeddings"] = false;
  EXPECT_TRUE(parseTarget(j).tieWordEmbeddings);
}

TEST(TargetConfig, MissingRequiredFieldIsNamed) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j.erase("hidden_size");
  EXPECT_THAT(problemAt(targetProblems(j), "hidden_size").message, HasSubstr("required"));
}

TEST(TargetConfig, NonPositiveAndMistypedValuesAreRefused) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["num_hidden_layers"] = 0;
  j["vocab_size"] = "151936";
  j["rms_norm_eps"] = -1;
  const auto p = targetProblems(j);
  EXPECT_THAT(problemAt(p, "num_hidden_layers").message, HasSubstr("at least 1, found 0"));
  EXPECT_THAT(problemAt(p, "vocab_size").message, HasSubstr("expected an integer"));
  EXPECT_THAT(problemAt(p, "rms_norm_eps").message, HasSubstr("-1"));
}

TEST(TargetConfig, AbsurdSizesAreRefusedBeforeAnythingIsAllocated) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["num_hidden_layers"] = 2000000000;
  j["head_dim"] = 1 << 20;
  const auto p = targetProblems(j);
  EXPECT_THAT(problemAt(p, "num_hidden_layers").message, HasSubstr("at most 100000, found 2000000000"));
  EXPECT_THAT(problemAt(p, "head_dim").message, HasSubstr("at most 65536"));
  j["num_hidden_layers"] = std::int64_t{1} << 40;  // an integer that does not fit 32 bits
  EXPECT_THAT(problemAt(targetProblems(j), "num_hidden_layers").message, HasSubstr("expected an integer"));
}

TEST(TargetConfig, KeyValueHeadsMustDivideHeads) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["text_config"]["num_key_value_heads"] = 5;
  const ConfigProblem p = problemAt(targetProblems(j), "text_config.num_key_value_heads");
  EXPECT_THAT(p.message, HasSubstr("5 does not divide num_attention_heads 24"));
}

TEST(TargetConfig, LayerTypesLengthMustEqualLayerCount) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["text_config"]["layer_types"].erase(0);
  EXPECT_THAT(problemAt(targetProblems(j), "text_config.layer_types").message,
              HasSubstr("has 63 entries but num_hidden_layers is 64"));
}

TEST(TargetConfig, LayerTypeTheFamilyDoesNotHaveIsRefused) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 36; ++i) j["layer_types"].push_back(i == 3 ? "linear_attention" : "full_attention");
  EXPECT_THAT(problemAt(targetProblems(j), "layer_types[3]").message, HasSubstr("unsupported layer type"));
}

TEST(TargetConfig, UnknownRopeTypeIsRefusedWithTheSupportedList) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["text_config"]["rope_parameters"]["rope_type"] = "longrope";
  EXPECT_THAT(problemAt(targetProblems(j), "text_config.rope_parameters.rope_type").message,
              HasSubstr("\"longrope\" (supported: default, yarn, llama3, proportional)"));
}

TEST(TargetConfig, LegacyRopeScalingTypeKeyIsReadAndChecked) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  EXPECT_THAT(problemAt(targetProblems(j), "rope_scaling.type").message, HasSubstr("\"dynamic\""));
  j["rope_scaling"] = {{"type", "yarn"}, {"rope_type", "default"}};
  EXPECT_THAT(problemAt(targetProblems(j), "rope_scaling.rope_type").message, HasSubstr("disagrees"));
}

TEST(TargetConfig, RopeNestedByLayerTypeMustAgreeAcrossAttentionKinds) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["use_sliding_window"] = true;
  j["sliding_window"] = 4096;
  j["max_window_layers"] = 30;
  j["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 36; ++i) j["layer_types"].push_back(i < 30 ? "full_attention" : "sliding_attention");
  j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 1e6}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1e4}}}};
  EXPECT_THAT(problemAt(targetProblems(j), "rope_parameters.sliding_attention").message,
              HasSubstr("differs from rope_parameters.full_attention"));
  j["rope_parameters"]["sliding_attention"]["rope_theta"] = 1e6;
  const TargetConfig c = parseTarget(j);
  EXPECT_EQ(c.rope.theta, 1e6);
  EXPECT_EQ(c.slidingWindow, 4096);
  EXPECT_EQ(c.numLayersOfType(LayerType::SlidingAttention), 6);
}

TEST(TargetConfig, PartialRotaryFactorMustRotateAnEvenChannelCount) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.3;  // 76.8 -> 76: fine
  EXPECT_EQ(parseTarget(j).rope.rotaryDim(256), 76);
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.29;  // 74.24 -> 74
  EXPECT_EQ(parseTarget(j).rope.rotaryDim(256), 74);
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.287;  // 73.47 -> 73: odd
  EXPECT_THAT(problemAt(targetProblems(j), "text_config.rope_parameters.partial_rotary_factor").message,
              HasSubstr("rotates 73 channels"));
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 1.5;
  EXPECT_THAT(problemAt(targetProblems(j), "text_config.rope_parameters.partial_rotary_factor").message,
              HasSubstr("(0, 1]"));
}

TEST(TargetConfig, FlatRopeValuesAreBlamedWhereTheyAreWritten) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["text_config"].erase("rope_parameters");
  j["text_config"]["rope_theta"] = 0.5;
  j["text_config"]["partial_rotary_factor"] = 2.0;
  const auto p = targetProblems(j);
  EXPECT_THAT(problemAt(p, "text_config.rope_theta").message, HasSubstr("must be > 1, found 0.5"));
  EXPECT_THAT(problemAt(p, "text_config.partial_rotary_factor").message, HasSubstr("(0, 1], found 2.0"));
  // Without any rope value the Qwen3.5 defaults apply: theta 10000, a quarter of the head.
  j["text_config"].erase("rope_theta");
  j["text_config"].erase("partial_rotary_factor");
  const TargetConfig c = parseTarget(j);
  EXPECT_EQ(c.rope.theta, 10000);
  EXPECT_EQ(c.rope.rotaryDim(c.headDim), 64);
}

TEST(TargetConfig, UnknownModelTypeListsTheSupportedOnes) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["model_type"] = "mistral";
  EXPECT_THAT(problemAt(targetProblems(j), "model_type").message,
              HasSubstr("\"mistral\" (supported: qwen3, qwen3_moe, qwen3_5, qwen3_5_text, qwen3_5_moe, "
                        "qwen3_5_moe_text, qwen3_next, llama, gpt_oss, minimax_m2, glm4_moe, gemma4_text, gemma4, deepseek_v3, kimi_k2, kimi_k25, glm_moe_dsa)"));
}

TEST(TargetConfig, UnknownArchitectureListsTheSupportedOnes) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["architectures"] = {"Qwen3_5MoeForConditionalGeneration"};
  EXPECT_THAT(problemAt(targetProblems(j), "architectures[0]").message,
              HasSubstr("supported: Qwen3_5ForConditionalGeneration, Qwen3_5ForCausalLM"));
}

TEST(TargetConfig, DrafterConfigIsNotATarget) {
  const auto p = problemsOf([] { parseTargetConfig(configFixture("zlab_qwen3_8b_dflash_b16.json")); });
  EXPECT_THAT(problemAt(p, "architectures[0]").message, HasSubstr("DFlash drafter config, not a target"));
}

TEST(TargetConfig, HybridChecks) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["text_config"]["attn_output_gate"] = false;
  j["text_config"]["linear_num_value_heads"] = 40;
  j["text_config"].erase("linear_key_head_dim");
  const auto p = targetProblems(j);
  EXPECT_EQ(p.size(), 3u);
  EXPECT_THAT(problemAt(p, "text_config.attn_output_gate").message, HasSubstr("always gates"));
  EXPECT_THAT(problemAt(p, "text_config.linear_num_value_heads").message,
              HasSubstr("40 is not a multiple of linear_num_key_heads 16"));
  EXPECT_THAT(problemAt(p, "text_config.linear_key_head_dim").message, HasSubstr("required"));
}

TEST(TargetConfig, Qwen3_5WithoutTextConfigIsRefused) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j.erase("text_config");
  EXPECT_THAT(problemAt(targetProblems(j), "text_config").message, HasSubstr("required for model_type qwen3_5"));
}

TEST(TargetConfig, SlidingLayersNeedAWindow) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 36; ++i) j["layer_types"].push_back("sliding_attention");
  EXPECT_THAT(problemAt(targetProblems(j), "sliding_window").message, HasSubstr("no sliding window"));
}

TEST(TargetConfig, Llama3RopeNeedsEveryFieldTransformersReads) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["model_type"] = "llama";
  j["architectures"] = {"LlamaForCausalLM"};
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}};
  const std::vector<ConfigProblem> found = targetProblems(j);
  EXPECT_THAT(problemAt(found, "rope_scaling.high_freq_factor").message, HasSubstr("required for rope type llama3"));
  EXPECT_THAT(problemAt(found, "rope_scaling.original_max_position_embeddings").message, HasSubstr("required"));
  j["rope_scaling"]["high_freq_factor"] = 1.0;
  j["rope_scaling"]["original_max_position_embeddings"] = 8192;
  EXPECT_THAT(problemAt(targetProblems(j), "rope_scaling.high_freq_factor").message, HasSubstr("must differ"));
}

TEST(TargetConfig, Mxfp4IsOnlyReadForGptOss) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["quantization_config"] = {{"quant_method", "mxfp4"}};
  EXPECT_THAT(problemAt(targetProblems(j), "quantization_config.quant_method").message,
              HasSubstr("\"mxfp4\" is not supported for model_type qwen3"));
}

TEST(TargetConfig, EosIdsMayBeAListAndMustBeInTheVocabulary) {
  nlohmann::json j = fixtureJson("qwen3_8b.json");
  j["eos_token_id"] = {151645, 151643};
  EXPECT_EQ(parseTarget(j).eosTokenIds, (std::vector<int>{151645, 151643}));
  j["eos_token_id"] = {151645, 999999};
  EXPECT_THAT(problemAt(targetProblems(j), "eos_token_id").message, HasSubstr("999999 is not below vocab_size 151936"));
}

TEST(TargetConfig, EveryProblemIsReportedAtOnceAndTheMessageNamesFileAndFields) {
  nlohmann::json j = fixtureJson("qwen3_6_27b.json");
  j["text_config"]["num_key_value_heads"] = 7;
  j["text_config"]["rope_parameters"]["rope_theta"] = -5;
  j["text_config"].erase("vocab_size");
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "dfi_target_config_test.json";
  std::ofstream(path) << j.dump();
  try {
    parseTargetConfig(path);
    FAIL() << "expected a ConfigValidationError";
  } catch (const ConfigValidationError& e) {
    EXPECT_EQ(e.problems().size(), 3u);
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr(path.string()));
    EXPECT_THAT(what, HasSubstr("text_config.num_key_value_heads: 7 does not divide num_attention_heads 24"));
    EXPECT_THAT(what, HasSubstr("text_config.rope_parameters.rope_theta: must be > 1, found -5"));
    EXPECT_THAT(what, HasSubstr("text_config.vocab_size: required"));
    EXPECT_EQ(e.exitCode(), ValidationError("").exitCode());
  }
  std::filesystem::remove(path);
}

TEST(TargetConfig, MalformedJsonIsAFormatErrorWithTheByteOffset) {
  try {
    parseTargetConfigText("{\"model_type\": \"qwen3\",, }", "broken.json");
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.context().file, "broken.json");
    EXPECT_EQ(e.context().byteOffset, 24u);
  }
  EXPECT_THROW(parseTargetConfigText("[1, 2]", "array.json"), FormatError);
  EXPECT_THROW(parseTargetConfig("/nonexistent/config.json"), IoError);
}

// Found by fuzz_config: a number too large for a double made nlohmann throw out_of_range
// (not parse_error), which escaped as an unhandled exception.
TEST(TargetConfig, ANumberBeyondDoubleIsAFormatError) {
  const std::string text = R"({"architectures": ["Qwen3ForCausalLM"], "attention_dropout": 0.07E777777777})";
  try {
    parseTargetConfigText(text, "config.json");
    FAIL() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.context().file, "config.json");
    EXPECT_THAT(e.what(), HasSubstr("number overflow"));
  }
}

}  // namespace
}  // namespace dfi::modelspec
