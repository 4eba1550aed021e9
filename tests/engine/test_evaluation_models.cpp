// An evaluation opens each model directory once: the target and every drafter are loaded from
// the checkpoints loadModels opened for the compatibility check and the identities (the bundled
// demo: a small target and its good drafter). Copies of a tensorfile::Checkpoint share its
// memory maps, so a model loaded from the opened checkpoint reads through the very same
// mappings; a second Checkpoint::open would map the files anew.

#include <gtest/gtest.h>

#include <filesystem>

#include <c10/core/InferenceMode.h>

#include "dfi/engine/model_registry.h"
#include "evaluation/diagnosis/hypotheses.h"
#include "evaluation/evaluation_models.h"

using namespace dfi;
using namespace dfi::engine;
namespace fs = std::filesystem;

namespace {

const fs::path kDemo = fs::path(DFI_SOURCE_DIR) / "resources/demo";

EvaluationSettings demoSettings() {
  EvaluationSettings s;
  s.target = kDemo / "target";
  s.drafters = {kDemo / "drafter-good", kDemo / "drafter-early"};
  s.prompts = kDemo / "prompts.jsonl";
  return s;
}

// Whether `loaded` reads the files `opened` mapped (and not a mapping of its own).
void expectSameMappings(const tensorfile::Checkpoint& loaded, const tensorfile::Checkpoint& opened) {
  ASSERT_EQ(loaded.shards().size(), opened.shards().size());
  for (std::size_t i = 0; i < opened.shards().size(); ++i)
    EXPECT_EQ(&loaded.shards()[i].mapping(), &opened.shards()[i].mapping()) << opened.shards()[i].path();
}

void expectBuiltFromTheOpenedFiles(const LoadedModels& models) {
  EXPECT_EQ(models.targetFiles.identity.weightsSha256, models.targetFiles.checkpoint.headerSha256());
  expectSameMappings(models.target->checkpoint(), models.targetFiles.checkpoint);
  ASSERT_EQ(models.drafters.size(), 2u);
  for (const LoadedDrafter& d : models.drafters) {
    EXPECT_EQ(d.identity.weightsSha256, d.checkpoint.headerSha256());
    ASSERT_NE(d.model->checkpoint(), nullptr);
    expectSameMappings(*d.model->checkpoint(), d.checkpoint);
  }
}

}  // namespace

TEST(EvaluationModels, EachModelIsLoadedFromTheCheckpointOpenedForItsChecks) {
  c10::InferenceMode inference;
  expectBuiltFromTheOpenedFiles(loadModels(demoSettings()));
}

TEST(EvaluationModels, ARegistryLoadsFromTheCheckpointTheEvaluationOpened) {
  c10::InferenceMode inference;
  ModelRegistry registry;
  expectBuiltFromTheOpenedFiles(loadModels(demoSettings(), &registry));
}

// diagnose's block-size and window:full variants read the drafter's opened checkpoint too.
TEST(EvaluationModels, VariantDraftersReadTheOpenedCheckpoint) {
  c10::InferenceMode inference;
  const LoadedModels models = loadModels(demoSettings());
  const LoadedDrafter& good = models.drafters.front();
  const Hypothesis halfBlocks{.kind = Hypothesis::Kind::BlockSize, .blockSize = good.config.blockSize / 2};
  const Hypothesis windowFull{.kind = Hypothesis::Kind::WindowFull};
  for (const Hypothesis* h : {&halfBlocks, &windowFull}) {
    const auto variant = variantDrafter(*h, good, *models.target);
    ASSERT_NE(variant, nullptr);
    ASSERT_NE(variant->checkpoint(), nullptr);
    expectSameMappings(*variant->checkpoint(), good.checkpoint);
  }
  EXPECT_EQ(variantDrafter(halfBlocks, good, *models.target)->blockSize(), good.config.blockSize / 2);
}
