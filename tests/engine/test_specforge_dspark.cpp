// SpecForge's DSpark drafters (specforge 0.2.0, tests/oracle/gen_specforge_dspark.py): z-lab's
// layout with dflash_config.projector_type "dspark", built, saved and run by the package itself
// (its spec_generate, greedy, every block whole). The engine's live loop in the same counting
// (StepCounting::FullBlocks) drafts every block as the package does, step for step: the drafts of
// its Markov head's chain, the acceptance lengths, the output, and the confidence head's output
// within 1e-4. SpecForge's rnn head starts at the first drafted slot, speculators' over the
// anchor's row too: the config says which (DsparkConfig::rnnStepsOverAnchorRow).

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "dfi/tensorfile/safetensors_file.h"
#include "evaluation/evaluation_models.h"
#include "evaluation/live/dflash_decode.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

using test::referenceTensor;
using test::toVector;

const std::filesystem::path kDir = std::filesystem::path(DFI_BINARY_DIR) / "tests/oracle/specforge_dspark";

class SpecforgeDspark : public ::testing::TestWithParam<const char*> {};

TEST_P(SpecforgeDspark, LiveLoopDraftsEveryBlockAsThePackage) {
  const std::filesystem::path dir = kDir / GetParam();
  const auto reference = tensorfile::SafetensorsFile::open(dir / "reference.safetensors");
  const auto target = TargetModel::load(dir / "target", ModelOptions{});
  const auto drafter = loadDrafter(dir / "drafter", *target);
  const modelspec::DrafterConfig& config = drafter->config();
  ASSERT_TRUE(config.dspark.has_value());
  EXPECT_FALSE(config.dspark->rnnStepsOverAnchorRow);
  EXPECT_FALSE(config.sampleFromAnchor);
  EXPECT_TRUE(config.warnings.empty()) << config.warnings.front().field;
  const bool confident = config.dspark->confidenceHead;
  int steps = 0;
  double worstConfidence = 0;
  for (int i = 0; reference.find("prompt." + std::to_string(i)); ++i) {
    SCOPED_TRACE("prompt " + std::to_string(i));
    const std::string n = std::to_string(i);
    const std::vector<std::int64_t> prompt = toVector(referenceTensor(reference, "prompt." + n));
    const std::vector<std::int64_t> output = toVector(referenceTensor(reference, "output." + n));
    const std::vector<std::int64_t> lengths = toVector(referenceTensor(reference, "acceptance." + n));
    const at::Tensor drafts = referenceTensor(reference, "drafts." + n).to(at::kLong);
    const SpeculativeResult result =
        speculativeDecode(*target, *drafter, prompt,
                          {.maxNewTokens = static_cast<int>(output.size() - prompt.size()),
                           .counting = StepCounting::FullBlocks});
    ASSERT_GE(result.steps.size(), lengths.size());
    for (std::size_t s = 0; s < lengths.size(); ++s) {
      const session::StepRecord& step = result.steps[s];
      EXPECT_EQ(std::vector<std::int64_t>(step.draftTokens.begin(), step.draftTokens.end()),
                toVector(drafts[static_cast<std::int64_t>(s)]))
          << "step " << s;
      EXPECT_EQ(step.acceptLength(), lengths[s]) << "step " << s;
      if (confident) {
        const at::Tensor expected = referenceTensor(reference, "confidence." + n)[static_cast<std::int64_t>(s)];
        const double diff = (at::tensor(step.draftConfidence) - expected).abs().max().item<double>();
        EXPECT_LE(diff, 1e-4) << "step " << s;
        worstConfidence = std::max(worstConfidence, diff);
      } else {
        EXPECT_TRUE(step.draftConfidence.empty());
      }
    }
    EXPECT_EQ(std::vector<std::int64_t>(result.tokens.begin(), result.tokens.begin() + static_cast<std::ptrdiff_t>(output.size())),
              output);
    steps += static_cast<int>(lengths.size());
  }
  std::cout << GetParam() << ": " << steps << " steps as the package's, confidence max abs diff " << worstConfidence
            << "\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, SpecforgeDspark, ::testing::Values("rnn", "gated"));

// The same rnn head read as speculators reads it (its state stepped over the anchor's row too)
// drafts differently: the convention matters, and the config's format decides it.
TEST(SpecforgeDsparkConvention, RnnStartingOverTheAnchorRowDraftsOtherwise) {
  const std::filesystem::path dir = kDir / "rnn";
  const auto reference = tensorfile::SafetensorsFile::open(dir / "reference.safetensors");
  const auto target = TargetModel::load(dir / "target", ModelOptions{});
  const DrafterFiles files = openDrafter(dir / "drafter", target->config().numHiddenLayers);
  modelspec::DrafterConfig asSpeculators = files.config;
  asSpeculators.dspark->rnnStepsOverAnchorRow = true;
  const auto drafter = loadDrafterAs(files.checkpoint, *target, std::move(asSpeculators));
  const std::vector<std::int64_t> prompt = toVector(referenceTensor(reference, "prompt.0"));
  const std::vector<std::int64_t> output = toVector(referenceTensor(reference, "output.0"));
  const at::Tensor drafts = referenceTensor(reference, "drafts.0").to(at::kLong);
  const SpeculativeResult result = speculativeDecode(
      *target, *drafter, prompt,
      {.maxNewTokens = static_cast<int>(output.size() - prompt.size()), .counting = StepCounting::FullBlocks});
  // The output stays the target's (lossless either way); some block's drafts do not.
  int differing = 0;
  for (std::int64_t s = 0; s < drafts.size(0) && s < static_cast<std::int64_t>(result.steps.size()); ++s) {
    const auto& mine = result.steps[static_cast<std::size_t>(s)].draftTokens;
    differing += std::vector<std::int64_t>(mine.begin(), mine.end()) != toVector(drafts[s]);
  }
  EXPECT_GT(differing, 0);
  std::cout << "read as speculators: " << differing << " of " << drafts.size(0) << " blocks drafted otherwise\n";
}

}  // namespace
}  // namespace dfi::engine
