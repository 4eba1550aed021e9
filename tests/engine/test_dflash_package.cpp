// The drafter against z-lab's published `dflash` package (0.1.0), the reference itself
// (tests/oracle/gen_dflash_package.py): drafters built and saved by the package's
// DFlashDraftModel, every layer's output and the logits per anchor, fp32 within 1e-4.

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/drafter_config.h"
#include "models/dflash_drafter.h"
#include "models/dflash_weights.h"

namespace dfi::engine {
namespace {

const std::filesystem::path kPackageDir = std::filesystem::path(DFI_BINARY_DIR) / "tests/oracle/dflash_package";
constexpr double kTolerance = 1e-4;

at::Tensor readReference(const tensorfile::Checkpoint& file, const std::string& name) {
  const tensorfile::TensorView view = file.tensor(name);
  const auto dtype = view.info().dtype == tensorfile::DType::I64 ? at::kLong : at::kFloat;
  return at::from_blob(const_cast<void*>(view.data()), view.info().shape, at::TensorOptions().dtype(dtype)).clone();
}

double maxAbsDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>();
}

class PackageDrafterForward : public ::testing::TestWithParam<std::string> {
 protected:
  const std::filesystem::path dir = kPackageDir / "forward" / GetParam();
  const tensorfile::DrafterConfig config = tensorfile::parseDrafterConfig(dir / "config.json");
  const tensorfile::Checkpoint reference =
      tensorfile::Checkpoint::open(dir / "reference.safetensors", tensorfile::NameMapping::identity());
  const DFlashDrafter drafter{config,
                              loadDrafterWeights(dir, config, config.hiddenSize, at::kFloat, at::kCPU),
                              {readReference(reference, "embed_tokens"), readReference(reference, "lm_head")}};
};

TEST_P(PackageDrafterForward, EveryLayerAndTheLogitsMatchPerAnchor) {
  const at::Tensor features = readReference(reference, "features");
  const at::Tensor tokens = readReference(reference, "tokens");
  const at::Tensor anchors = readReference(reference, "anchors");
  double worstLayer = 0, worstLogits = 0;
  for (std::int64_t j = 0; j < anchors.numel(); ++j) {
    const std::int64_t a = anchors[j].item<std::int64_t>();
    SCOPED_TRACE("anchor " + std::to_string(a));
    DrafterKvCache cache = drafter.newCache();
    DrafterProbes probes{.wantLayerOutputs = true};
    const at::Tensor logits = drafter.draft(cache, features.narrow(0, 0, a), tokens[a].item<std::int64_t>(), a,
                                            analysis::MaskVariant::Reference, &probes);
    ASSERT_EQ(static_cast<int>(probes.layerOutputs.size()), config.numHiddenLayers);
    for (int l = 0; l < config.numHiddenLayers; ++l) {
      const double diff = maxAbsDiff(probes.layerOutputs[static_cast<std::size_t>(l)],
                                     readReference(reference, "layer_output." + std::to_string(j) + "." + std::to_string(l)));
      EXPECT_LE(diff, kTolerance) << "layer " << l;
      worstLayer = std::max(worstLayer, diff);
    }
    const double diff = maxAbsDiff(logits, readReference(reference, "logits." + std::to_string(j)));
    EXPECT_LE(diff, kTolerance) << "logits";
    worstLogits = std::max(worstLogits, diff);
  }
  std::cout << GetParam() << ": layer outputs max abs diff " << worstLayer << ", logits " << worstLogits << "\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, PackageDrafterForward, ::testing::Values("full", "sliding_yarn_bias"));

}  // namespace
}  // namespace dfi::engine
