// What a target will hold on each device, planned from its headers before loading: parameter
// counts against the tensors actually loaded, the layer split, a tied head copied only when it
// lands on another device than the embeddings, a placement refused with the device and the
// shortfall before anything is copied, and no second host copy of weights that were converted.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/engine/memory_plan.h"
#include "dfi/modelspec/parameter_count.h"
#include "models/target_model.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

MemoryPlan planFor(const std::string& model, const ModelOptions& options) {
  const auto dir = test::oracleDir() / model;
  return planTargetMemory(tensorfile::Checkpoint::open(dir), modelspec::parseTargetConfig(dir / "config.json"),
                          options);
}

TEST(MemoryPlan, LayersSplitContiguouslyTheFirstDevicesTakingTheRemainder) {
  EXPECT_EQ(layersPerDevice(1, 5), (std::vector<int>{5}));
  EXPECT_EQ(layersPerDevice(2, 5), (std::vector<int>{3, 2}));
  EXPECT_EQ(layersPerDevice(3, 8), (std::vector<int>{3, 3, 2}));
}

TEST(MemoryPlan, OneDeviceHoldsEveryParameterTheModelLoads) {
  for (const std::string model : {"qwen3_tied_gqa", "qwen35_untied", "qwen35_vl_layout", "qwen3_next_dense"}) {
    const MemoryPlan plan = planFor(model, {.devices = {"cpu"}, .dtype = "bf16"});
    const auto target = TargetModel::load(test::oracleDir() / model, {.devices = {"cpu"}, .dtype = "bf16"});
    // The independent count: the checkpoint's tensors the engine maps (vision and MTP skipped).
    std::uint64_t mapped = 0;
    for (const std::string& name : target->checkpoint().names())
      mapped += modelspec::storedParameters(target->checkpoint().info(name));
    EXPECT_EQ(plan.totalParameters, mapped) << model;
    EXPECT_EQ(plan.activeParameters, plan.totalParameters) << model << ": a dense model is active in full";
    ASSERT_EQ(plan.devices.size(), 1u);
    EXPECT_EQ(plan.devices[0].bytes, 2 * mapped) << model;
    EXPECT_TRUE(plan.devices[0].embeddings && plan.devices[0].head);
    EXPECT_EQ(plan.devices[0].layerCount, target->numLayers());
  }
}

// Every mixture-of-experts model: gpt-oss plain and MXFP4-packed, Qwen3-MoE, Qwen3.5-MoE and
// Qwen3-Next with experts, experts stored per expert and stacked. transformers' num_parameters()
// of the model, and its active count from the module tree (each layer's routed experts at k/E),
// written by the generators (tests/oracle/transformers_reference.py).
TEST(MemoryPlan, MixtureOfExpertsCountsAsTransformersDoesInEitherLayout) {
  for (const std::string model :
       {"llama_gptoss/gpt_oss_plain", "llama_gptoss/gpt_oss_mxfp4", "moe_models/qwen3_moe",
        "moe_models/qwen3_moe_stacked", "moe_models/qwen35_moe_vl_layout", "moe_models/qwen35_moe_stacked",
        "moe_models/qwen3_next_moe"}) {
    const auto dir = std::filesystem::path(DFI_BINARY_DIR) / "oracle" / model;
    const auto expected = nlohmann::json::parse(std::ifstream(dir / "parameters.json"));
    const MemoryPlan plan = planTargetMemory(tensorfile::Checkpoint::open(dir),
                                             modelspec::parseTargetConfig(dir / "config.json"), {.dtype = "bf16"});
    EXPECT_EQ(plan.totalParameters, expected["total"].get<std::uint64_t>()) << model;
    EXPECT_EQ(plan.activeParameters, expected["active"].get<std::uint64_t>()) << model;
    EXPECT_LT(plan.activeParameters, plan.totalParameters) << model;
    EXPECT_EQ(plan.devices[0].bytes, 2 * plan.totalParameters) << model << ": every parameter in bf16";
  }
}

TEST(MemoryPlan, ATiedHeadOnAnotherDeviceIsACopy) {
  const MemoryPlan one = planFor("qwen3_tied_gqa", {.devices = {"cpu"}});
  const MemoryPlan two = planFor("qwen3_tied_gqa", {.devices = {"cpu", "cpu"}});
  const auto config = modelspec::parseTargetConfig(test::oracleDir() / "qwen3_tied_gqa" / "config.json");
  const std::uint64_t embedding = std::uint64_t(config.vocabSize) * config.hiddenSize;
  ASSERT_EQ(two.devices.size(), 2u);
  EXPECT_EQ(two.devices[0].layerCount + two.devices[1].layerCount, config.numHiddenLayers);
  EXPECT_TRUE(two.devices[0].embeddings && !two.devices[0].head);
  EXPECT_TRUE(!two.devices[1].embeddings && two.devices[1].head);
  EXPECT_EQ(two.devices[0].bytes + two.devices[1].bytes, one.devices[0].bytes + 4 * embedding);
  EXPECT_EQ(two.totalParameters, one.totalParameters);
}

TEST(MemoryPlan, APlacementThatCannotFitIsRefusedBeforeLoading) {
  const ModelOptions options{.devices = {"cpu"}, .dtype = "fp32", .maxMemory = {{"cpu", 4096}}};
  const MemoryPlan plan = planFor("qwen35_untied", options);
  ASSERT_FALSE(plan.devices[0].fits());
  try {
    TargetModel::load(test::oracleDir() / "qwen35_untied", options);
    FAIL() << "the load must be refused";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cpu cannot hold"), std::string::npos) << message;
    EXPECT_NE(message.find(byteSizeText(plan.devices[0].bytes - 4096) + " short"), std::string::npos) << message;
    EXPECT_NE(message.find("--max-memory"), std::string::npos) << message;
  }
  EXPECT_THROW(planFor("qwen35_untied", {.devices = {"cpu"}, .maxMemory = {{"cuda:0", 1}}}), UsageError)
      << "a cap on a device that is not used is a mistake";
}

TEST(MemoryPlan, ConvertedWeightsLeaveNoHostCopyInTheMapping) {
  // fp32 on disk, bf16 in memory: every tensor is a copy, and its mapped pages are released.
  const auto target = TargetModel::load(test::oracleDir() / "qwen35_untied", {.devices = {"cpu"}, .dtype = "bf16"});
  const auto& mapping = target->checkpoint().shards().at(0).mapping();
  EXPECT_LE(mapping.residentBytes(), 64u * 1024) << "of " << target->checkpoint().totalBytes() << " bytes";
}

TEST(MemoryPlan, ByteSizes) {
  EXPECT_EQ(parseByteSize("4096"), 4096u);
  EXPECT_EQ(parseByteSize("2KiB"), 2048u);
  EXPECT_EQ(parseByteSize("1.5G"), 1610612736u);
  EXPECT_EQ(parseByteSize("70GiB"), 70ull << 30);
  EXPECT_EQ(parseByteSize("512MB"), 512000000u);
  for (const char* bad : {"", "GiB", "-1G", "12 apples", "3 GiB extra"}) EXPECT_THROW(parseByteSize(bad), UsageError) << bad;
  EXPECT_EQ(byteSizeText(512), "512 B");
  EXPECT_EQ(byteSizeText(3u << 20), "3.0 MiB");
}

}  // namespace
}  // namespace dfi::engine
