#include "dfi/engine/model_registry.h"

#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "evaluation/evaluation_models.h"
#include "models/model_registry_impl.h"

namespace dfi::engine {

ModelRegistry::ModelRegistry() : impl_(std::make_unique<Impl>()) {}
ModelRegistry::~ModelRegistry() = default;

const TargetModel& ModelRegistry::Impl::target(const std::filesystem::path& dir, const ModelOptions& options) {
  std::string key = std::filesystem::absolute(dir).lexically_normal().string() + "|" + options.dtype;
  for (const std::string& device : options.devices) key += "|" + device;
  if (!target_ || key != targetKey_) {
    drafters_.clear();  // they hold the old target's embedding and head
    target_.reset();
    logText("engine", LogLevel::Info, "loading target " + dir.string() + " (" + options.dtype + ")");
    target_ = TargetModel::load(dir, options);
    targetKey_ = key;
  }
  return *target_;
}

const DFlashDrafter& ModelRegistry::Impl::drafter(const std::filesystem::path& dir, std::optional<int> blockSize) {
  if (!target_) throw UsageError("a drafter needs its target loaded first", {.file = dir.string()});
  const auto key = std::make_pair(std::filesystem::absolute(dir).lexically_normal().string(), blockSize.value_or(0));
  auto& slot = drafters_[key];
  if (!slot) {
    logText("engine", LogLevel::Info, "loading drafter " + dir.string());
    slot = loadDrafter(dir, *target_, blockSize);
  }
  return *slot;
}

}  // namespace dfi::engine
