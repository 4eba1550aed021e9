#pragma once
// Loading what an evaluation needs: the target (model + tokenizer) and every drafter, each
// drafter checked against the target before any weight is read, with their identities for
// the run records. Each model directory is opened once per evaluation (TargetFiles,
// DrafterFiles): the compatibility check, the identity, the memory plan and the weights all
// read that one checkpoint.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "dfi/engine/evaluation.h"
#include "dfi/engine/model_registry.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/modelspec/target_config.h"
#include "dfi/session/records.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tokenizer/tokenizer.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"

namespace dfi::engine {

// A target directory as an evaluation opened it: config.json parsed, the checkpoint's headers
// read and its shards mapped (no weight read yet), under the names the target reads
// (tensorfile::NameMapping::qwenText).
struct TargetFiles {
  std::filesystem::path dir;
  modelspec::TargetConfig config;
  tensorfile::Checkpoint checkpoint;
  session::ModelIdentity identity;  // what a run records: the directory, config.json verbatim, the headers' SHA-256
};

// A drafter directory likewise, its config read against the target's layer count (its trained
// block size: no --block-size applied), its checkpoint under tensorfile::NameMapping::dflashDrafter.
struct DrafterFiles {
  std::filesystem::path dir;
  modelspec::DrafterConfig config;
  tensorfile::Checkpoint checkpoint;
  session::ModelIdentity identity;
};

// Throw as parseTargetConfig / parseDrafterConfig and tensorfile::Checkpoint::open do, config
// first.
TargetFiles openTarget(const std::filesystem::path& dir);
DrafterFiles openDrafter(const std::filesystem::path& dir, int targetLayers);

// A drafter as an evaluation runs it: its files (the dir and identity evaluation.cpp and the run
// records read) and the model loaded from them.
struct LoadedDrafter : DrafterFiles {
  const DFlashDrafter* model = nullptr;
  std::unique_ptr<DFlashDrafter> owned;  // unless a ModelRegistry holds it
};

struct LoadedModels {
  TargetFiles targetFiles;  // the target was loaded from this checkpoint, unless a registry already held it
  const TargetModel* target = nullptr;
  std::unique_ptr<TargetModel> ownedTarget;  // unless a ModelRegistry holds it
  // From the target's tokenizer.json; without one, prompts must be token ids and the session
  // shows tokens by id.
  std::optional<tokenizer::Tokenizer> tokenizer;
  std::vector<LoadedDrafter> drafters;
};

// What loading is doing, in words ("loading the target Qwen3-8B: 16.4 GB in 5 files"), for the
// progress a user watches while a large checkpoint loads: the CLI's bar, serve's progress frames.
using LoadingStage = std::function<void(const std::string&)>;

// With a registry the models come from it (and stay there for the next request); without,
// LoadedModels owns them. `stage`, when given, hears each step of the loading before it starts.
LoadedModels loadModels(const EvaluationSettings& settings, ModelRegistry* registry = nullptr,
                        const LoadingStage& stage = {});

// A drafter that shares `target`'s embedding and LM head, drafting blocks of `blockSize` when
// given (checked by loadModels against the trained size) instead of its config's block_size.
std::unique_ptr<DFlashDrafter> loadDrafter(const DrafterFiles& files, const TargetModel& target,
                                           std::optional<int> blockSize = std::nullopt);
std::unique_ptr<DFlashDrafter> loadDrafter(const std::filesystem::path& dir, const TargetModel& target,
                                           std::optional<int> blockSize = std::nullopt);
// The drafter of a checkpoint (opened under NameMapping::dflashDrafter) or of `dir` with its
// weights under another reading of its config (`diagnose`'s variants: sliding layers made full),
// and `edit`, when given, applied to its weights before the drafter is built (a variant mapping).
using DrafterWeightsEdit = std::function<void(DrafterWeights&)>;
std::unique_ptr<DFlashDrafter> loadDrafterAs(const tensorfile::Checkpoint& checkpoint, const TargetModel& target,
                                             modelspec::DrafterConfig config, const DrafterWeightsEdit& edit = {});
std::unique_ptr<DFlashDrafter> loadDrafterAs(const std::filesystem::path& dir, const TargetModel& target,
                                             modelspec::DrafterConfig config);

}  // namespace dfi::engine
