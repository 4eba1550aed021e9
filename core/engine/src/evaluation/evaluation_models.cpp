#include "evaluation/evaluation_models.h"

#include <fstream>
#include <sstream>

#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/compatibility.h"
#include "dfi/tensorfile/drafter_config.h"
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

session::ModelIdentity identityOf(const fs::path& dir) {
  return {dir.string(), readText(dir / "config.json"), tensorfile::Checkpoint::open(dir).headerSha256()};
}

// Every drafter is checked against the target before any weight is loaded, and every
// mismatch of every drafter is reported at once.
void checkDrafters(const EvaluationSettings& settings, const tensorfile::TargetConfig& target) {
  const auto targetCheckpoint = tensorfile::Checkpoint::open(settings.target);
  std::ostringstream problems;
  for (const fs::path& dir : settings.drafters) {
    const auto config = tensorfile::parseDrafterConfig(dir / "config.json", target.numHiddenLayers);
    // A smaller block drafts only slots the drafter was trained on; a larger one would ask for
    // slots it has never learned, so it is refused rather than measured as a bad drafter.
    if (settings.blockSize && *settings.blockSize > config.blockSize)
      throw UsageError("--block-size " + std::to_string(*settings.blockSize) +
                           " is above the block size this drafter was trained with (" +
                           std::to_string(config.blockSize) + ")",
                       {.file = (dir / "config.json").string(), .item = "block_size"});
    const auto drafterCheckpoint = tensorfile::Checkpoint::open(dir);
    tensorfile::CheckpointFacts facts;
    for (const char* name : {"fc.weight", "model.fc.weight"})
      if (drafterCheckpoint.contains(name)) facts.drafterFcWeightShape = drafterCheckpoint.info(name).shape;
    if (targetCheckpoint.contains("model.embed_tokens.weight"))
      facts.targetEmbeddingRows = targetCheckpoint.info("model.embed_tokens.weight").shape.at(0);
    const auto report = tensorfile::checkCompatibility(config, target, facts);
    for (const auto& issue : report.issues)
      if (issue.severity == tensorfile::Severity::Warning)
        logText("engine", LogLevel::Warn, dir.string() + ": " + issue.field + ": " + issue.message);
    try {
      report.throwIfIncompatible(dir.string(), settings.target.string());
    } catch (const ValidationError& e) {
      problems << e.what() << "\n";
    }
  }
  if (!problems.str().empty()) throw ValidationError(problems.str());
}

}  // namespace

std::unique_ptr<DFlashDrafter> loadDrafter(const fs::path& dir, const TargetModel& target,
                                           std::optional<int> blockSize) {
  auto config = tensorfile::parseDrafterConfig(dir / "config.json", target.config().numHiddenLayers);
  if (blockSize) config.blockSize = *blockSize;
  return loadDrafterAs(dir, target, std::move(config));
}

std::unique_ptr<DFlashDrafter> loadDrafterAs(const fs::path& dir, const TargetModel& target,
                                             tensorfile::DrafterConfig config) {
  TargetHead head{target.embeddingWeight(), target.lmHeadWeight()};
  auto weights = loadDrafterWeights(dir, config, target.config().hiddenSize, head.lmHead.scalar_type(),
                                    head.lmHead.device());
  return std::make_unique<DFlashDrafter>(config, std::move(weights), std::move(head));
}

LoadedModels loadModels(const EvaluationSettings& settings, ModelRegistry* registry) {
  if (settings.drafters.empty()) throw UsageError("an evaluation needs at least one drafter");
  const auto targetConfig = tensorfile::parseTargetConfig(settings.target / "config.json");
  checkDrafters(settings, targetConfig);
  LoadedModels models;
  models.targetIdentity = identityOf(settings.target);
  if (registry) {
    models.target = &registry->impl().target(settings.target, settings.model);
  } else {
    models.ownedTarget = TargetModel::load(settings.target, settings.model);
    models.target = models.ownedTarget.get();
  }
  if (fs::exists(settings.target / "tokenizer.json"))
    models.tokenizer = tokenizer::Tokenizer::fromDirectory(settings.target);
  else
    logText("engine", LogLevel::Warn, settings.target.string() + ": no tokenizer.json; prompts must be token ids");
  for (const fs::path& dir : settings.drafters) {
    LoadedDrafter drafter{dir, identityOf(dir), nullptr, nullptr};
    if (registry) {
      drafter.model = &registry->impl().drafter(dir, settings.blockSize);
    } else {
      drafter.owned = loadDrafter(dir, *models.target, settings.blockSize);
      drafter.model = drafter.owned.get();
    }
    models.drafters.push_back(std::move(drafter));
  }
  return models;
}

}  // namespace dfi::engine
