// On CUDA (label gpu; skipped without a device): the same model on cuda:0 in fp32 matches the
// CPU run, bf16 on the GPU keeps argmax agreement with transformers, and with two or more GPUs
// the layers split across them give the same result as one device.

#include <gtest/gtest.h>

#include <torch/cuda.h>

#include "models/target_model.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

class TargetGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  }
};

at::Tensor idsOf(const std::string& model) {
  const auto ref = tensorfile::SafetensorsFile::open(test::oracleDir() / model / "reference.safetensors");
  return test::referenceTensor(ref, "input_ids").unsqueeze(0);
}

TEST_P(TargetGpu, Fp32OnCudaMatchesTheCpu) {
  const at::Tensor ids = idsOf(GetParam());
  const auto cpu = TargetModel::load(test::oracleDir() / GetParam(), {.devices = {"cpu"}});
  const auto gpu = TargetModel::load(test::oracleDir() / GetParam(), {.devices = {"cuda:0"}});
  const ForwardOutput a = cpu->forward(ids, nullptr, {.tapLayers = {0, 1}});
  const ForwardOutput b = gpu->forward(ids, nullptr, {.tapLayers = {0, 1}});
  EXPECT_TRUE(b.logits.is_cuda());
  EXPECT_LE(test::maxAbsDiff(a.logits, b.logits), 1e-3);  // TF32-free fp32, other kernels
  EXPECT_LE(test::maxAbsDiff(a.taps[1], b.taps[1]), 1e-3);
}

TEST_P(TargetGpu, Bf16OnCudaAgreesWithTransformersBf16) {
  const std::string model = GetParam() + "_trained";
  const auto ref = tensorfile::SafetensorsFile::open(test::oracleDir() / model / "reference.safetensors");
  const auto gpu = TargetModel::load(test::oracleDir() / model, {.devices = {"cuda:0"}, .dtype = "bf16"});
  const at::Tensor logits = gpu->forward(test::referenceTensor(ref, "input_ids").unsqueeze(0), nullptr).logits;
  const at::Tensor ours = logits[0].argmax(-1).cpu();
  const double agreement = ours.eq(test::referenceTensor(ref, "logits_bf16").argmax(-1)).to(at::kDouble).mean().item<double>();
  EXPECT_GE(agreement, 0.98);  // CUDA bf16 kernels against transformers on the CPU
}

TEST_P(TargetGpu, LayersSplitAcrossDevicesGiveTheSameResult) {
  if (torch::cuda::device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  const at::Tensor ids = idsOf(GetParam());
  const auto one = TargetModel::load(test::oracleDir() / GetParam(), {.devices = {"cuda:0"}});
  const auto two = TargetModel::load(test::oracleDir() / GetParam(), {.devices = {"cuda:0", "cuda:1"}});
  EXPECT_NE(two->placement().layerDevice.front(), two->placement().layerDevice.back());
  ModelCache cache = two->newCache();
  two->forward(ids.narrow(1, 0, 100), &cache);
  const at::Tensor step = two->forward(ids.narrow(1, 100, 1), &cache).logits;
  const at::Tensor full = one->forward(ids.narrow(1, 0, 101), nullptr).logits;
  EXPECT_LE(test::maxAbsDiff(step[0][0], full[0][100]), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Models, TargetGpu, ::testing::Values("qwen3_tied_gqa", "qwen35_untied", "qwen3_next_dense"));

}  // namespace
}  // namespace dfi::engine
