#include "dfi/engine/model_registry.h"

#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "evaluation/evaluation_models.h"
#include "models/model_registry_impl.h"

namespace dfi::engine {

ModelRegistry::ModelRegistry() : impl_(std::make_unique<Impl>()) {}
ModelRegistry::~ModelRegistry() = default;

const TargetModel& ModelRegistry::Impl::target(const std::filesystem::path& dir, const ModelOptions& options) {
  return heldTarget(dir, options, [&] { return TargetModel::load(dir, options); });
}

const TargetModel& ModelRegistry::Impl::target(const TargetFiles& files, const ModelOptions& options) {
  return heldTarget(files.dir, options, [&] { return TargetModel::load(files.checkpoint, files.config, options); });
}

const DFlashDrafter& ModelRegistry::Impl::drafter(const std::filesystem::path& dir, std::optional<int> blockSize) {
  return heldDrafter(dir, blockSize, [&] { return loadDrafter(dir, *target_, blockSize); });
}

const DFlashDrafter& ModelRegistry::Impl::drafter(const DrafterFiles& files, std::optional<int> blockSize) {
  return heldDrafter(files.dir, blockSize, [&] { return loadDrafter(files, *target_, blockSize); });
}

const TargetModel& ModelRegistry::Impl::heldTarget(const std::filesystem::path& dir, const ModelOptions& options,
                                                   const TargetLoad& load) {
  std::string key = std::filesystem::absolute(dir).lexically_normal().string() + "|" + options.dtype;
  for (const std::string& device : options.devices) key += "|" + device;
  if (!target_ || key != targetKey_) {
    drafters_.clear();  // they hold the old target's embedding and head
    target_.reset();
    logText("engine", LogLevel::Info, "loading target " + dir.string() + " (" + options.dtype + ")");
    target_ = load();
    targetKey_ = key;
  }
  return *target_;
}

const DFlashDrafter& ModelRegistry::Impl::heldDrafter(const std::filesystem::path& dir, std::optional<int> blockSize,
                                                      const DrafterLoad& load) {
  if (!target_) throw UsageError("a drafter needs its target loaded first", {.file = dir.string()});
  const auto key = std::make_pair(std::filesystem::absolute(dir).lexically_normal().string(), blockSize.value_or(0));
  auto& slot = drafters_[key];
  if (!slot) {
    logText("engine", LogLevel::Info, "loading drafter " + dir.string());
    slot = load();
  }
  return *slot;
}

}  // namespace dfi::engine
