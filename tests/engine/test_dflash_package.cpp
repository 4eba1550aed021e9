// The drafter and the live loop against z-lab's published `dflash` package (0.1.0), the
// reference itself (tests/oracle/gen_dflash_package.py): drafters built and saved by the
// package's DFlashDraftModel and DFlash2DraftModel, every layer's output and the logits per
// anchor, fp32 within 1e-4, and DFlash2's selector path; the live loop's tokens and acceptance lengths equal dflash_generate's (its own caches,
// greedy) per prompt, blocks 16 and 8, budgets that end inside a block, stop tokens that fire;
// on a hybrid (Gated DeltaNet) target, those of its loop with the target recomputed in full.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/modelspec/drafter_config.h"
#include "evaluation/live/dflash_decode.h"
#include "models/dflash_drafter.h"
#include "models/dflash_weights.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

const std::filesystem::path kPackageDir = std::filesystem::path(DFI_BINARY_DIR) / "tests/oracle/dflash_package";
constexpr double kTolerance = 1e-4;

using test::maxAbsDiff;
using test::referenceTensor;

class PackageDrafterForward : public ::testing::TestWithParam<std::string> {
 protected:
  const std::filesystem::path dir = kPackageDir / "forward" / GetParam();
  const modelspec::DrafterConfig config = modelspec::parseDrafterConfig(dir / "config.json");
  const tensorfile::SafetensorsFile reference = tensorfile::SafetensorsFile::open(dir / "reference.safetensors");
  const DFlashDrafter drafter{config,
                              loadDrafterWeights(dir, config, config.hiddenSize, at::kFloat, at::kCPU),
                              {referenceTensor(reference, "embed_tokens"), referenceTensor(reference, "lm_head")}};
};

TEST_P(PackageDrafterForward, EveryLayerAndTheLogitsMatchPerAnchor) {
  const at::Tensor features = referenceTensor(reference, "features");
  const at::Tensor tokens = referenceTensor(reference, "tokens");
  const at::Tensor anchors = referenceTensor(reference, "anchors");
  double worstLayer = 0, worstLogits = 0;
  int overruled = 0;
  for (std::int64_t j = 0; j < anchors.numel(); ++j) {
    const std::int64_t a = anchors[j].item<std::int64_t>();
    SCOPED_TRACE("anchor " + std::to_string(a));
    DrafterKvCache cache = drafter.newCache();
    DrafterProbes probes{.wantLayerOutputs = true};
    at::Tensor blockStates;  // every row; the selector reads slots 1..B-1
    const at::Tensor logits = drafter.draft(cache, features.narrow(0, 0, a), tokens[a].item<std::int64_t>(), a,
                                            analysis::MaskVariant::Reference, &probes, 0, &blockStates);
    ASSERT_EQ(static_cast<int>(probes.layerOutputs.size()), config.numHiddenLayers);
    for (int l = 0; l < config.numHiddenLayers; ++l) {
      const double diff = maxAbsDiff(probes.layerOutputs[static_cast<std::size_t>(l)],
                                     referenceTensor(reference, "layer_output." + std::to_string(j) + "." + std::to_string(l)));
      EXPECT_LE(diff, kTolerance) << "layer " << l;
      worstLayer = std::max(worstLayer, diff);
    }
    const double diff = maxAbsDiff(logits, referenceTensor(reference, "logits." + std::to_string(j)));
    EXPECT_LE(diff, kTolerance) << "logits";
    worstLogits = std::max(worstLogits, diff);
    if (const auto selector = drafter.selector()) {  // DFlash2: the selector's greedy path
      const SelectorPath path =
          selector->select(blockStates.narrow(0, 1, blockStates.size(0) - 1), logits, tokens[a].item<std::int64_t>());
      const at::Tensor expected = referenceTensor(reference, "selector_path." + std::to_string(j));
      EXPECT_EQ(path.tokens, std::vector<std::int64_t>(expected.data_ptr<std::int64_t>(),
                                                       expected.data_ptr<std::int64_t>() + expected.numel()));
      EXPECT_TRUE(at::equal(std::get<0>(path.candidates.sort(-1)),
                            referenceTensor(reference, "candidates." + std::to_string(j))));
      overruled += static_cast<int>(std::ranges::count_if(path.chosen, [](std::int32_t c) { return c != 0; }));
    }
  }
  if (drafter.selector()) {
    EXPECT_GT(overruled, 0) << "the selector must overrule the argmax somewhere";
  }
  std::cout << GetParam() << ": layer outputs max abs diff " << worstLayer << ", logits " << worstLogits << "\n";
}

// vLLM's four drafter attention styles (all non-causal full; causal sliding + non-causal full;
// all sliding non-causal, a symmetric window; all sliding causal), is_causal on full layers,
// and the embedding scale, output multiplier and logit soft cap.
INSTANTIATE_TEST_SUITE_P(Cases, PackageDrafterForward,
                         ::testing::Values("full", "sliding_yarn_bias", "sliding_noncausal", "sliding_causal",
                                           "causal_full", "scaled_softcap", "dflash2"));

// Runs every case of `dir`/cases.json ({prompt, block_size, max_new_tokens, stop_tokens,
// output_ids, acceptance_lengths}) through the live loop; returns how many steps were cut.
int expectCasesReproduced(const std::filesystem::path& dir, const nlohmann::json& cases) {
  const auto target = TargetModel::load(dir / "target", ModelOptions{});
  int steps = 0, stopped = 0, cut = 0;
  for (const nlohmann::json& c : cases) {
    modelspec::DrafterConfig config =
        modelspec::parseDrafterConfig(dir / "drafter/config.json", target->config().numHiddenLayers);
    config.blockSize = c.at("block_size").get<int>();
    const DFlashDrafter drafter(config,
                                loadDrafterWeights(dir / "drafter", config, target->config().hiddenSize, at::kFloat,
                                                   at::kCPU),
                                {target->embeddingWeight(), target->lmHeadWeight()});
    const auto prompt = c.at("prompt").get<std::vector<std::int64_t>>();
    const SpeculativeResult live = speculativeDecode(
        *target, drafter, prompt,
        {.maxNewTokens = c.at("max_new_tokens").get<int>(),
         .stopTokens = c.at("stop_tokens").get<std::vector<std::int64_t>>()});
    SCOPED_TRACE(c.dump().substr(0, 160));
    EXPECT_EQ(live.tokens, c.at("output_ids").get<std::vector<std::int64_t>>());
    std::vector<int> lengths;
    for (const session::StepRecord& step : live.steps) {
      lengths.push_back(step.acceptLength());
      cut += step.countedLength > 0;
    }
    EXPECT_EQ(lengths, c.at("acceptance_lengths").get<std::vector<int>>());
    steps += static_cast<int>(lengths.size());
    stopped += !c.at("stop_tokens").empty();
  }
  std::cout << dir.filename().string() << ": " << cases.size() << " cases (" << stopped << " with stop tokens), "
            << steps << " steps, " << cut << " of them cut by the budget or a stop token\n";
  return cut;
}

nlohmann::json readJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(PackageLiveLoop, TokensAndAcceptanceLengthsAreDflashGenerates) {
  const nlohmann::json cases = readJson(kPackageDir / "live/cases.json");
  ASSERT_FALSE(cases.empty());
  EXPECT_GT(expectCasesReproduced(kPackageDir / "live", cases), 0);
}

// DFlash2 drafts with its candidate selector's path; its checkpoint stores the codebooks as z-lab
// does, without ".weight".
TEST(PackageLiveLoop, Dflash2TokensAndAcceptanceLengthsAreDflashGenerates) {
  const nlohmann::json cases = readJson(kPackageDir / "live_dflash2/cases.json");
  ASSERT_FALSE(cases.empty());
  expectCasesReproduced(kPackageDir / "live_dflash2", cases);
}

// On a Gated DeltaNet hybrid, transformers' cache crop keeps the rejected drafts in the
// recurrent state (the generator measured it), so the reference there is dflash_generate's loop
// with the target recomputed in full each step; the engine rolls its own state back and must
// give the same tokens and acceptance lengths.
TEST(PackageLiveLoop, HybridTargetIsTheFullyRecomputedLoop) {
  const nlohmann::json file = readJson(kPackageDir / "hybrid/cases.json");
  std::cout << "transformers' crop vs a full recompute: logits differ by " << file.at("crop_max_abs_diff") << "\n";
  EXPECT_GT(file.at("crop_max_abs_diff").get<double>(), 1e-2);
  ASSERT_FALSE(file.at("cases").empty());
  expectCasesReproduced(kPackageDir / "hybrid", file.at("cases"));
}

}  // namespace
}  // namespace dfi::engine
