// What a target will hold on each device, planned from its headers before loading: parameter
// counts against the tensors actually loaded, the layer split, a tied head copied only when it
// lands on another device than the embeddings, a placement refused with the device and the
// shortfall before anything is copied, and no second host copy of weights that were converted.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
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

TEST(MemoryPlan, LayersSplitContiguouslyBySize) {
  using Sizes = std::vector<std::uint64_t>;
  // Equal layers and nothing else: the first devices take the remainder.
  EXPECT_EQ(layersPerDevice(Sizes(5, 1), 0, 0, 1), (std::vector<int>{5}));
  EXPECT_EQ(layersPerDevice(Sizes(5, 1), 0, 0, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(layersPerDevice(Sizes(8, 1), 0, 0, 3), (std::vector<int>{3, 3, 2}));
  // Large embeddings leave the first device fewer layers, a large head the last one.
  EXPECT_EQ(layersPerDevice(Sizes{5, 5, 5, 5}, 10, 0, 2), (std::vector<int>{1, 3}));
  EXPECT_EQ(layersPerDevice(Sizes{4, 4, 4, 4}, 0, 8, 2), (std::vector<int>{3, 1}));
  // DeepSeek-V3's shape: small dense first layers, then large sparse ones.
  EXPECT_EQ(layersPerDevice(Sizes{1, 1, 1, 10, 10, 10, 10}, 0, 0, 2), (std::vector<int>{5, 2}));
  // More devices than layers: the last holds only the head.
  EXPECT_EQ(layersPerDevice(Sizes{3, 3}, 0, 1, 3), (std::vector<int>{1, 1, 0}));
}

// The split's largest share against every contiguous split, enumerated (small cases).
TEST(MemoryPlan, TheLargestShareIsTheSmallestAnyContiguousSplitGives) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int layers = 1 + static_cast<int>(random() % 7), devices = 1 + static_cast<int>(random() % 4);
    std::vector<std::uint64_t> sizes;
    for (int i = 0; i < layers; ++i) sizes.push_back(1 + random() % 20);
    const std::uint64_t first = random() % 30, last = random() % 30;
    auto largestShare = [&](const std::vector<int>& counts) {
      std::uint64_t largest = 0;
      std::size_t layer = 0;
      for (int d = 0; d < devices; ++d) {
        std::uint64_t share = (d == 0 ? first : 0) + (d + 1 == devices ? last : 0);
        for (int i = 0; i < counts[static_cast<std::size_t>(d)]; ++i) share += sizes[layer++];
        largest = std::max(largest, share);
      }
      return largest;
    };
    // Every composition of `layers` into `devices` non-negative parts.
    std::uint64_t best = UINT64_MAX;
    std::vector<int> counts(static_cast<std::size_t>(devices), 0);
    std::function<void(int, int)> enumerate = [&](int device, int left) {
      if (device + 1 == devices) {
        counts.back() = left;
        best = std::min(best, largestShare(counts));
        return;
      }
      for (int n = 0; n <= left; ++n) {
        counts[static_cast<std::size_t>(device)] = n;
        enumerate(device + 1, left - n);
      }
    };
    enumerate(0, layers);
    const std::vector<int> split = layersPerDevice(sizes, first, last, devices);
    ASSERT_EQ(split.size(), static_cast<std::size_t>(devices));
    EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0), layers);
    EXPECT_EQ(largestShare(split), best) << "trial " << trial;
  }
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
// Qwen3-Next with experts, experts stored per expert and stacked; DeepSeek-V3's and GLM-5's
// (shared experts, dense first layers, latent attention, GLM-5's indexers). transformers' num_parameters()
// of the model, and its active count from the module tree (each layer's routed experts at k/E),
// written by the generators (tests/oracle/transformers_reference.py); the sigmoid routers'
// e_score_correction_bias is a buffer transformers does not count but stores, and info counts.
TEST(MemoryPlan, MixtureOfExpertsCountsAsTransformersDoesInEitherLayout) {
  for (const std::string model :
       {"llama_gptoss/gpt_oss_plain", "llama_gptoss/gpt_oss_mxfp4", "moe_models/qwen3_moe",
        "moe_models/qwen3_moe_stacked", "moe_models/qwen35_moe_vl_layout", "moe_models/qwen35_moe_stacked",
        "moe_models/qwen3_next_moe", "deepseek/deepseek_v3_yarn", "deepseek/deepseek_v3_plain", "glm5/glm5_sparse",
        "glm5/glm5_pattern"}) {
    const auto dir = std::filesystem::path(DFI_BINARY_DIR) / "oracle" / model;
    const auto expected = nlohmann::json::parse(std::ifstream(dir / "parameters.json"));
    const tensorfile::Checkpoint checkpoint = tensorfile::Checkpoint::open(dir);
    std::uint64_t buffers = 0;
    for (const std::string& name : checkpoint.names())
      if (name.ends_with(".e_score_correction_bias")) buffers += static_cast<std::uint64_t>(checkpoint.info(name).numel());
    const MemoryPlan plan =
        planTargetMemory(checkpoint, modelspec::parseTargetConfig(dir / "config.json"), {.dtype = "bf16"});
    EXPECT_EQ(plan.totalParameters, expected["total"].get<std::uint64_t>() + buffers) << model;
    EXPECT_EQ(plan.activeParameters, expected["active"].get<std::uint64_t>() + buffers) << model;
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
