#pragma once
// Loading what an evaluation needs: the target (model + tokenizer) and every drafter, each
// drafter checked against the target before any weight is read, with their identities for
// the run records.

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "dfi/engine/evaluation.h"
#include "dfi/engine/model_registry.h"
#include "dfi/session/records.h"
#include "dfi/tokenizer/tokenizer.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"

namespace dfi::engine {

struct LoadedDrafter {
  std::filesystem::path dir;
  session::ModelIdentity identity;
  const DFlashDrafter* model = nullptr;
  std::unique_ptr<DFlashDrafter> owned;  // unless a ModelRegistry holds it
};

struct LoadedModels {
  const TargetModel* target = nullptr;
  std::unique_ptr<TargetModel> ownedTarget;  // unless a ModelRegistry holds it
  session::ModelIdentity targetIdentity;
  // From the target's tokenizer.json; without one, prompts must be token ids and the session
  // shows tokens by id.
  std::optional<tokenizer::Tokenizer> tokenizer;
  std::vector<LoadedDrafter> drafters;
};

// With a registry the models come from it (and stay there for the next request); without,
// LoadedModels owns them.
LoadedModels loadModels(const EvaluationSettings& settings, ModelRegistry* registry = nullptr);

// A drafter that shares `target`'s embedding and LM head, drafting blocks of `blockSize` when
// given (checked by loadModels against the trained size) instead of its config's block_size.
std::unique_ptr<DFlashDrafter> loadDrafter(const std::filesystem::path& dir, const TargetModel& target,
                                           std::optional<int> blockSize = std::nullopt);
// The drafter of `dir` with its weights under another reading of its config (`diagnose`'s
// variants: sliding layers made full).
std::unique_ptr<DFlashDrafter> loadDrafterAs(const std::filesystem::path& dir, const TargetModel& target,
                                             tensorfile::DrafterConfig config);

}  // namespace dfi::engine
