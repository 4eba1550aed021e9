#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "dfi/engine/model_options.h"
#include "dfi/engine/model_registry.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"

namespace dfi::engine {

struct TargetFiles;
struct DrafterFiles;

struct ModelRegistry::Impl {
  // Loads `dir` unless it is the target already held with the same options; from `files`, the
  // directory an evaluation opened, without opening it again.
  const TargetModel& target(const std::filesystem::path& dir, const ModelOptions& options);
  const TargetModel& target(const TargetFiles& files, const ModelOptions& options);
  // A drafter sharing the current target's embedding and LM head; call target() first.
  const DFlashDrafter& drafter(const std::filesystem::path& dir, std::optional<int> blockSize);
  const DFlashDrafter& drafter(const DrafterFiles& files, std::optional<int> blockSize);

 private:
  using TargetLoad = std::function<std::unique_ptr<TargetModel>()>;
  using DrafterLoad = std::function<std::unique_ptr<DFlashDrafter>()>;
  const TargetModel& heldTarget(const std::filesystem::path& dir, const ModelOptions& options, const TargetLoad& load);
  const DFlashDrafter& heldDrafter(const std::filesystem::path& dir, std::optional<int> blockSize,
                                   const DrafterLoad& load);

  std::string targetKey_;
  std::unique_ptr<TargetModel> target_;
  std::map<std::pair<std::string, int>, std::unique_ptr<DFlashDrafter>> drafters_;
};

}  // namespace dfi::engine
