#include "evaluation/evaluation_models.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/compatibility.h"
#include "dfi/modelspec/drafter_config.h"
#include "models/dflash_weights.h"
#include "models/model_registry_impl.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw IoError("cannot read", {.file = file.string()});
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string gigabytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

session::ModelIdentity identityOf(const fs::path& dir, const tensorfile::Checkpoint& checkpoint) {
  return {dir.string(), readText(dir / "config.json"), checkpoint.headerSha256()};
}

DrafterFiles drafterFiles(const fs::path& dir, modelspec::DrafterConfig config) {
  auto checkpoint = tensorfile::Checkpoint::open(dir, tensorfile::NameMapping::dflashDrafter());
  auto identity = identityOf(dir, checkpoint);
  return {dir, std::move(config), std::move(checkpoint), std::move(identity)};
}

// Every drafter is checked against the target before any weight is loaded, and every
// mismatch of every drafter is reported at once. Returns each drafter's files, opened for the
// check and kept for the load.
std::vector<DrafterFiles> checkDrafters(const EvaluationSettings& settings, const TargetFiles& target) {
  std::ostringstream problems;
  std::vector<DrafterFiles> drafters;
  for (const fs::path& dir : settings.drafters) {
    auto config = modelspec::parseDrafterConfig(dir / "config.json", target.config.numHiddenLayers);
    // A smaller block drafts only slots the drafter was trained on; a larger one would ask for
    // slots it has never learned, so it is refused rather than measured as a bad drafter.
    if (settings.blockSize && *settings.blockSize > config.blockSize)
      throw UsageError("--block-size " + std::to_string(*settings.blockSize) +
                           " is above the block size this drafter was trained with (" +
                           std::to_string(config.blockSize) + ")",
                       {.file = (dir / "config.json").string(), .item = "block_size"});
    const DrafterFiles& files = drafters.emplace_back(drafterFiles(dir, std::move(config)));
    modelspec::CheckpointFacts facts;
    // NameMapping::dflashDrafter reads a vLLM-style "model.fc.weight" as "fc.weight" too.
    if (files.checkpoint.contains("fc.weight")) facts.drafterFcWeightShape = files.checkpoint.info("fc.weight").shape;
    if (target.checkpoint.contains("model.embed_tokens.weight"))
      facts.targetEmbeddingRows = target.checkpoint.info("model.embed_tokens.weight").shape.at(0);
    const auto report = modelspec::checkCompatibility(files.config, target.config, facts);
    for (const auto& issue : report.issues)
      if (issue.severity == modelspec::Severity::Warning)
        logText("engine", LogLevel::Warn, dir.string() + ": " + issue.field + ": " + issue.message);
    try {
      report.throwIfIncompatible(dir.string(), settings.target.string());
    } catch (const ValidationError& e) {
      problems << e.what() << "\n";
    }
  }
  if (!problems.str().empty()) throw ValidationError(problems.str());
  return drafters;
}

}  // namespace

TargetFiles openTarget(const fs::path& dir) {
  auto config = modelspec::parseTargetConfig(dir / "config.json");
  auto checkpoint = tensorfile::Checkpoint::open(dir);
  auto identity = identityOf(dir, checkpoint);
  return {dir, std::move(config), std::move(checkpoint), std::move(identity)};
}

DrafterFiles openDrafter(const fs::path& dir, int targetLayers) {
  return drafterFiles(dir, modelspec::parseDrafterConfig(dir / "config.json", targetLayers));
}

std::unique_ptr<DFlashDrafter> loadDrafter(const DrafterFiles& files, const TargetModel& target,
                                           std::optional<int> blockSize) {
  modelspec::DrafterConfig config = files.config;
  if (blockSize) config.blockSize = *blockSize;
  return loadDrafterAs(files.checkpoint, target, std::move(config));
}

std::unique_ptr<DFlashDrafter> loadDrafter(const fs::path& dir, const TargetModel& target,
                                           std::optional<int> blockSize) {
  return loadDrafter(openDrafter(dir, target.config().numHiddenLayers), target, blockSize);
}

std::unique_ptr<DFlashDrafter> loadDrafterAs(const tensorfile::Checkpoint& checkpoint, const TargetModel& target,
                                             modelspec::DrafterConfig config, const DrafterWeightsEdit& edit) {
  TargetHead head{target.embeddingWeight(), target.lmHeadWeight()};
  auto weights = loadDrafterWeights(checkpoint, config, target.config().hiddenSize, head.lmHead.scalar_type(),
                                    head.lmHead.device());
  if (edit) edit(weights);
  return std::make_unique<DFlashDrafter>(config, std::move(weights), std::move(head));
}

std::unique_ptr<DFlashDrafter> loadDrafterAs(const fs::path& dir, const TargetModel& target,
                                             modelspec::DrafterConfig config) {
  return loadDrafterAs(tensorfile::Checkpoint::open(dir, tensorfile::NameMapping::dflashDrafter()), target,
                       std::move(config));
}

LoadedModels loadModels(const EvaluationSettings& settings, ModelRegistry* registry, const LoadingStage& stage) {
  if (settings.drafters.empty()) throw UsageError("an evaluation needs at least one drafter");
  const auto say = [&](const std::string& what) {
    if (stage) stage(what);
  };
  say("reading the target's and drafters' configs and checkpoint headers");
  TargetFiles target = openTarget(settings.target);
  std::vector<DrafterFiles> drafters = checkDrafters(settings, target);
  LoadedModels models{.targetFiles = std::move(target)};
  say("loading the target " + settings.target.string() + ": " +
      gigabytes(models.targetFiles.checkpoint.totalBytes()) + " in " +
      std::to_string(models.targetFiles.checkpoint.shards().size()) + " file(s)");
  if (registry) {
    models.target = &registry->impl().target(models.targetFiles, settings.model);
  } else {
    models.ownedTarget =
        TargetModel::load(models.targetFiles.checkpoint, models.targetFiles.config, settings.model);
    models.target = models.ownedTarget.get();
  }
  models.tokenizer = tokenizer::Tokenizer::inDirectory(settings.target);
  if (!models.tokenizer)
    logText("engine", LogLevel::Warn,
            settings.target.string() + ": no tokenizer.json or tiktoken rank file; prompts must be token ids");
  const std::size_t drafterCount = drafters.size();
  for (DrafterFiles& files : drafters) {
    say("loading drafter " + std::to_string(models.drafters.size() + 1) + " of " + std::to_string(drafterCount) + ": " +
        files.dir.filename().string());
    LoadedDrafter drafter{std::move(files)};
    if (registry) {
      drafter.model = &registry->impl().drafter(drafter, settings.blockSize);
    } else {
      drafter.owned = loadDrafter(drafter, *models.target, settings.blockSize);
      drafter.model = drafter.owned.get();
    }
    models.drafters.push_back(std::move(drafter));
  }
  return models;
}

}  // namespace dfi::engine
