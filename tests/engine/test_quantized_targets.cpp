// Quantised targets against their references (tests/oracle/gen_quantized_models.py): for every
// format the engine dequantises at load (FP8 block scales, compressed-tensors' pack-quantized,
// float-quantized and NVFP4, ModelOpt NVFP4, GPTQ, AWQ), each dequantised weight equals the
// reference's bit for bit, and the fp32 logits equal those of the dequantised model run by
// transformers; then the bad checkpoints each format must refuse, with errors that name the file,
// the tensor, the config field and both shapes.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "dfi/modelspec/config_error.h"
#include "dfi/modelspec/parameter_count.h"
#include "dfi/modelspec/target_config.h"
#include "dfi/tensorfile/checkpoint.h"
#include "io/quantized_weights.h"
#include "io/weight_loader.h"
#include "models/target_model.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

using test::maxAbsDiff;
using test::referenceTensor;

std::filesystem::path fixture(const std::string& name) { return test::oracleRoot() / "quantized_models" / name; }

std::unique_ptr<TargetModel> loadTarget(const std::filesystem::path& dir) {
  return TargetModel::load(dir, ModelOptions{.devices = {"cpu"}, .dtype = "fp32"});
}

class QuantizedTarget : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Formats, QuantizedTarget,
                         ::testing::Values("fp8_block", "fp8_block_moe", "fp8_block_ragged", "ct_w4_group",
                                           "ct_w4_group_asym", "ct_w8_channel", "ct_w4_channel_asym", "ct_fp8_tensor",
                                           "ct_fp8_channel", "ct_fp8_block", "ct_nvfp4", "modelopt_nvfp4", "gptq",
                                           "gptq_act_order", "awq"));

TEST_P(QuantizedTarget, DequantisedWeightsAreTheReferencesBitForBit) {
  const std::filesystem::path dir = fixture(GetParam());
  const modelspec::TargetConfig config = modelspec::parseTargetConfig(dir / "config.json");
  ASSERT_TRUE(config.quantization);
  const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(dir);
  const WeightLoader weights(checkpoint, at::kFloat, quantizedWeightsFor(config.quantization));
  const auto reference = tensorfile::SafetensorsFile::open(dir / "dequantized.safetensors");
  ASSERT_FALSE(reference.tensors().empty());
  for (const tensorfile::TensorInfo& info : reference.tensors()) {
    const at::Tensor expected = referenceTensor(reference, info.name);
    const at::Tensor loaded = weights.load(info.name, info.shape, at::kCPU);
    ASSERT_EQ(loaded.scalar_type(), at::kFloat) << info.name;
    // Bit for bit: equal values (the references hold no NaN), each of them.
    EXPECT_TRUE(at::equal(loaded, expected)) << info.name << ": max abs diff " << maxAbsDiff(loaded, expected);
  }
  std::printf("%s: %zu dequantised weights bit-identical to the reference\n", GetParam().c_str(),
              reference.tensors().size());
}

TEST_P(QuantizedTarget, Fp32LogitsMatchTheDequantisedModelInTransformers) {
  const std::filesystem::path dir = fixture(GetParam());
  const auto reference = tensorfile::SafetensorsFile::open(dir / "reference.safetensors");
  const auto model = loadTarget(dir);
  const ForwardOutput out = model->forward(referenceTensor(reference, "input_ids").unsqueeze(0), nullptr);
  const at::Tensor expected = referenceTensor(reference, "logits");
  const double diff = maxAbsDiff(out.logits[0], expected);
  // The dequantised weights are bit-identical (the test above); what remains is fp32 rounding in
  // another order. The MoE's routed experts add up in another order on the ATen path than in
  // transformers (measured 1.05e-5 there, 6.7e-6 with the CPU kernels), hence its 2e-5.
  EXPECT_LE(diff, GetParam() == "fp8_block_moe" ? 2e-5 : 1e-5);
  std::printf("%s: fp32 logits max abs diff %.3g (logits up to %.3g)\n", GetParam().c_str(), diff,
              expected.abs().max().item<double>());
}

// The compute dtype of a served target: dequantised once into bf16, the same model.
TEST_P(QuantizedTarget, Bf16LoadIsTheFp32LoadRounded) {
  const std::filesystem::path dir = fixture(GetParam());
  const modelspec::TargetConfig config = modelspec::parseTargetConfig(dir / "config.json");
  const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(dir);
  const auto quantized = quantizedWeightsFor(config.quantization);
  const auto reference = tensorfile::SafetensorsFile::open(dir / "dequantized.safetensors");
  const tensorfile::TensorInfo& first = reference.tensors().front();
  const at::Tensor fp32 = WeightLoader(checkpoint, at::kFloat, quantized).load(first.name, first.shape, at::kCPU);
  const at::Tensor bf16 = WeightLoader(checkpoint, at::kBFloat16, quantized).load(first.name, first.shape, at::kCPU);
  ASSERT_EQ(bf16.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(bf16, fp32.to(at::kBFloat16)));
}

// `info` and the memory plan count the dequantised parameters (what the compute dtype will
// hold), not the packed words or the scales: every fixture of the same Qwen3 (all but the MoE
// one) counts as its FP8 copy, which stores one value per parameter.
TEST(QuantizedTargets, ParametersAreTheDequantisedOnes) {
  const auto parameters = [](const std::string& name) {
    const std::filesystem::path dir = fixture(name);
    return modelspec::countTargetParameters(tensorfile::Checkpoint::open(dir),
                                            modelspec::parseTargetConfig(dir / "config.json"))
        .total();
  };
  const auto fp8 = parameters("fp8_block");
  for (const char* name : {"fp8_block_ragged", "ct_w4_group", "ct_w4_group_asym", "ct_w8_channel", "ct_w4_channel_asym",
                           "ct_fp8_tensor", "ct_fp8_channel", "ct_fp8_block", "ct_nvfp4", "modelopt_nvfp4", "gptq",
                           "gptq_act_order", "awq"})
    EXPECT_EQ(parameters(name), fp8) << name;
}

// --- bad input -----------------------------------------------------------------------------

// Loading the bad checkpoint `name` fails with E, and its message holds every part.
template <typename E>
void expectRefused(const std::string& name, const std::vector<std::string>& parts) {
  try {
    loadTarget(fixture("bad/" + name));
    ADD_FAILURE() << name << " was loaded";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& part : parts) EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
  }
}

TEST(QuantizedTargetErrors, ScaleShapeThatDisagreesWithTheBlockSize) {
  expectRefused<ValidationError>("fp8_block_size_disagrees",
                                 {"model.safetensors", "model.layers.0.mlp.gate_proj.weight_scale_inv", "weight_block_size",
                                  "has shape [4, 2]", "implies [8, 2]", "[128, 64]"});
}

TEST(QuantizedTargetErrors, PackedTensorOfTheWrongLength) {
  expectRefused<ValidationError>("ct_w4_packed_short",
                                 {"model.safetensors", "model.layers.0.self_attn.q_proj.weight_packed", "num_bits 4",
                                  "has shape [64, 7]", "implies [64, 8]"});
  expectRefused<ValidationError>("ct_w4_num_bits_disagrees",
                                 {"model.safetensors", "model.layers.0.mlp.gate_proj.weight_packed", "num_bits 8",
                                  "has shape [128, 8]", "implies [128, 16]"});
}

TEST(QuantizedTargetErrors, GroupSizeThatDisagreesWithTheZeroPoints) {
  expectRefused<ValidationError>("gptq_group_size_disagrees",
                                 {"model.safetensors", "model.layers.0.mlp.gate_proj.qzeros", "group_size 64",
                                  "has shape [2, 16]", "implies [1, 16]"});
}

TEST(QuantizedTargetErrors, ActOrderGptqWithoutGIdx) {
  expectRefused<ValidationError>("gptq_act_order_without_g_idx",
                                 {"model.safetensors", "model.layers.0.mlp.gate_proj.g_idx", "desc_act"});
}

// Config-level refusals: the JSON path of the field and the value, before any tensor is read.
modelspec::ConfigProblem onlyProblem(const std::string& quantizationConfig) {
  const std::string json = R"({"model_type": "qwen3", "num_hidden_layers": 2, "hidden_size": 64,
      "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "vocab_size": 1000, "quantization_config": )" + quantizationConfig + "}";
  try {
    modelspec::parseTargetConfigText(json, "config.json");
  } catch (const modelspec::ConfigValidationError& e) {
    EXPECT_EQ(e.problems().size(), 1u) << e.what();
    if (!e.problems().empty()) return e.problems()[0];
  }
  ADD_FAILURE() << quantizationConfig << " was accepted";
  return {};
}

TEST(QuantizedTargetErrors, UnknownMethodAndUnsupportedOptionsAreRefusedByName) {
  modelspec::ConfigProblem p = onlyProblem(R"({"quant_method": "bitsandbytes"})");
  EXPECT_EQ(p.field, "quantization_config.quant_method");
  EXPECT_NE(p.message.find("\"bitsandbytes\" is not supported"), std::string::npos) << p.message;
  EXPECT_NE(p.message.find("compressed-tensors"), std::string::npos) << p.message;

  p = onlyProblem(R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0":
      {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": false}}}})");
  EXPECT_EQ(p.field, "quantization_config.config_groups.group_0.weights.symmetric");
  EXPECT_NE(p.message.find("asymmetric FP8"), std::string::npos) << p.message;

  p = onlyProblem(R"({"quant_method": "compressed-tensors", "format": "marlin-24", "config_groups": {"group_0":
      {"targets": ["Linear"], "weights": {"num_bits": 4}}}})");
  EXPECT_EQ(p.field, "quantization_config.config_groups.group_0.format");

  p = onlyProblem(R"({"quant_method": "fp8", "weight_block_size": [128, 128], "scale_fmt": "ue8m0"})");
  EXPECT_EQ(p.field, "quantization_config.scale_fmt");

  p = onlyProblem(R"({"quant_method": "gptq", "bits": 3, "group_size": 128})");
  EXPECT_EQ(p.field, "quantization_config.bits");
}

// An FP8 weight without a scale would be read as plain floats off by the missing scale.
TEST(QuantizedTargetErrors, Fp8WeightWithoutItsScaleIsRefused) {
  const std::filesystem::path dir = fixture("fp8_block");
  const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(dir);
  const WeightLoader plain(checkpoint, at::kFloat);  // as if config.json had no quantization_config
  try {
    plain.load("model.layers.0.self_attn.q_proj.weight", {64, 64}, at::kCPU);
    ADD_FAILURE() << "an FP8 weight was loaded without its scale";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("quantization_config"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dfi::engine
