// Llama 3.x and gpt-oss targets against transformers (tests/oracle/gen_llama_gptoss_models.py):
// every test of test_target_models.cpp (fp32 logits and hidden states, bf16 argmax, cached
// decode against transformers' own and a full recompute, verification rollback) over these
// models (and a Qwen3 with sliding layers, the windowed path without sinks), then what is
// particular to them: MXFP4 dequantisation bit for bit against
// transformers' convert_moe_packed_tensors, gpt-oss's router and experts, and their configs.

#include "target_oracle_suite.h"

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/config_error.h"
#include "io/mxfp4.h"
#include "io/weight_loader.h"
#include "models/gpt_oss_mlp.h"

namespace dfi::engine {
namespace {

using test::maxAbsDiff;
using test::TargetOracle;
INSTANTIATE_TEST_SUITE_P(Models, TargetOracle,
                         ::testing::Values("llama_gptoss/llama3_gqa", "llama_gptoss/llama_bias_tied",
                                           "llama_gptoss/gpt_oss_mxfp4", "llama_gptoss/gpt_oss_plain",
                                           "llama_gptoss/qwen3_sliding"));

std::filesystem::path modelDir(const std::string& name) { return test::oracleRoot() / "llama_gptoss" / name; }

at::Tensor bytes(const tensorfile::SafetensorsFile& file, const std::string& name) {
  const tensorfile::TensorView view = file.view(name);
  return at::from_blob(const_cast<void*>(view.data()), view.info().shape, at::TensorOptions().dtype(at::kByte)).clone();
}

bool sameValues(const at::Tensor& a, const at::Tensor& b) {  // bit for bit, NaN where NaN
  return a.sizes() == b.sizes() && at::allclose(a.to(at::kDouble), b.to(at::kDouble), 0.0, 0.0, /*equal_nan=*/true);
}

TEST(Mxfp4, EveryByteUnderEveryScaleDequantisesAsTransformers) {
  const auto file = tensorfile::SafetensorsFile::open(modelDir("gpt_oss_mxfp4") / "mxfp4.safetensors");
  const at::Tensor blocks = bytes(file, "blocks"), scales = bytes(file, "scales");
  EXPECT_TRUE(sameValues(dequantizeMxfp4(blocks, scales, at::kFloat), test::referenceTensor(file, "values.f32")));
  EXPECT_TRUE(sameValues(dequantizeMxfp4(blocks, scales, at::kBFloat16), test::referenceTensor(file, "values.bf16")));
}

TEST(Mxfp4, CheckpointExpertsLoadAsTransformersDequantisesThem) {
  const auto file = tensorfile::SafetensorsFile::open(modelDir("gpt_oss_mxfp4") / "mxfp4.safetensors");
  const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(modelDir("gpt_oss_mxfp4"));
  const WeightLoader weights(checkpoint, at::kFloat);
  const std::string prefix = "model.layers.0.mlp.experts.";
  EXPECT_TRUE(sameValues(loadMxfp4(weights, prefix + "gate_up_proj", 4, 64, 128, at::kCPU),
                         test::referenceTensor(file, "gate_up_proj")));
  EXPECT_TRUE(sameValues(loadMxfp4(weights, prefix + "down_proj", 4, 64, 64, at::kCPU),
                         test::referenceTensor(file, "down_proj")));
  // A config that disagrees with the blocks: the error names the file, the tensor and both shapes.
  try {
    loadMxfp4(weights, prefix + "gate_up_proj", 4, 64, 96, at::kCPU);
    ADD_FAILURE() << "a wrong expert shape was accepted";
  } catch (const ValidationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gate_up_proj_blocks"), std::string::npos) << what;
    EXPECT_NE(what.find("[4, 128, 2, 16]"), std::string::npos) << what;
    EXPECT_NE(what.find("[4, 96, 2, 16]"), std::string::npos) << what;
    EXPECT_NE(what.find("model.safetensors"), std::string::npos) << what;
  }
}

TEST(GptOssMlp, Mxfp4ExpertsWithoutAQuantizationConfigAreRefused) {
  const std::filesystem::path dir = modelDir("gpt_oss_mxfp4");
  const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(dir);
  modelspec::TargetConfig config = modelspec::parseTargetConfig(dir / "config.json");
  config.quantization.reset();
  try {
    GptOssMlp(WeightLoader(checkpoint, at::kFloat), config, 1, at::kCPU);
    ADD_FAILURE() << "MXFP4 blocks were read without a quantization_config";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.1.mlp.experts.gate_up_proj_blocks"), std::string::npos) << e.what();
  }
}

TEST(GptOssMlp, RouterChoiceAndOutputMatchTransformers) {
  const std::filesystem::path dir = modelDir("gpt_oss_mxfp4");
  const auto ref = tensorfile::SafetensorsFile::open(dir / "mlp.safetensors");
  const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(dir);
  const modelspec::TargetConfig config = modelspec::parseTargetConfig(dir / "config.json");
  const GptOssMlp mlp(WeightLoader(checkpoint, at::kFloat), config, 0, at::kCPU);
  ExpertRouting routing;
  const at::Tensor out = mlp.forward(test::referenceTensor(ref, "x"), &routing);
  EXPECT_TRUE(routing.experts[0].equal(test::referenceTensor(ref, "router_indices")));
  EXPECT_LE(maxAbsDiff(routing.weights[0], test::referenceTensor(ref, "router_scores")), 1e-6);
  EXPECT_LE(maxAbsDiff(out, test::referenceTensor(ref, "out")), 1e-5);
  std::printf("gpt-oss MLP max abs diff: %.3g\n", maxAbsDiff(out, test::referenceTensor(ref, "out")));
}

TEST(LlamaGptOssConfig, FamiliesReadAsTransformersDefinesThem) {
  const modelspec::TargetConfig llama = modelspec::parseTargetConfig(modelDir("llama3_gqa") / "config.json");
  EXPECT_EQ(llama.family, modelspec::TargetFamily::Llama);
  EXPECT_EQ(llama.headDim, 16);  // absent: hidden_size / num_attention_heads
  EXPECT_EQ(llama.rope.type, "llama3");
  EXPECT_EQ(llama.rope.originalMaxPositionEmbeddings, 64);
  const modelspec::TargetConfig bias = modelspec::parseTargetConfig(modelDir("llama_bias_tied") / "config.json");
  EXPECT_TRUE(bias.attentionBias && bias.mlpBias && bias.tieWordEmbeddings);

  const modelspec::TargetConfig oss = modelspec::parseTargetConfig(modelDir("gpt_oss_mxfp4") / "config.json");
  EXPECT_EQ(oss.family, modelspec::TargetFamily::GptOss);
  ASSERT_TRUE(oss.quantization.has_value());
  EXPECT_EQ(oss.quantization->method, "mxfp4");
  EXPECT_EQ(oss.slidingWindow, 32);
  EXPECT_EQ(oss.layerTypes, (std::vector{modelspec::LayerType::SlidingAttention, modelspec::LayerType::FullAttention,
                                         modelspec::LayerType::SlidingAttention}));
  EXPECT_EQ(oss.rope.type, "yarn");
  EXPECT_FALSE(oss.rope.truncate);
  ASSERT_TRUE(oss.moe && oss.swigluClamp);
  EXPECT_EQ(oss.moe->numExperts, 4);
  EXPECT_EQ(oss.moe->numExpertsPerToken, 2);
  EXPECT_DOUBLE_EQ(oss.swigluClamp->limit, 7.0);
}

TEST(LlamaGptOssConfig, OtherQuantisationMethodsAreRefusedByName) {
  for (const std::string method : {"bitsandbytes", "hqq", "quark"}) {
    const std::string json = R"({"model_type": "gpt_oss", "num_hidden_layers": 2, "hidden_size": 64,
        "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10,
        "num_local_experts": 4, "quantization_config": {"quant_method": ")" + method + R"("}})";
    try {
      modelspec::parseTargetConfigText(json, "config.json");
      ADD_FAILURE() << method << " was accepted";
    } catch (const modelspec::ConfigValidationError& e) {
      ASSERT_EQ(e.problems().size(), 1u) << e.what();
      EXPECT_EQ(e.problems()[0].field, "quantization_config.quant_method");
      EXPECT_NE(e.problems()[0].message.find("\"" + method + "\""), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace dfi::engine
