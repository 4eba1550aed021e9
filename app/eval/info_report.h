#pragma once
// The data behind `dflash-eval info`: one JSON document per model (kind, geometry, weights,
// validation) and per drafter/target pair (compatibility). --json prints it as is; the
// human form is rendered from the same document, so both always say the same thing.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dfi/engine/model_options.h"

namespace dfi::eval {

// A model directory (or its config.json). Config problems ("validation") and tensors that do
// not match the config ("weight_layout") are reported rather than thrown; unreadable or
// malformed files still throw dfi::Error.
// A target with weights also gets "memory": its total and active parameters and what each
// device of `placement` will hold (engine/memory_plan.h), "fits" and the refusal if it does not.
// targetNumLayers feeds a drafter's default tap rule when its config names no target depth.
nlohmann::json describeModel(const std::filesystem::path& dirOrConfig, const engine::ModelOptions& placement,
                             std::optional<int> targetNumLayers = {});

// Both models plus the compatibility report of the drafter against the target. Invalid
// configs throw (the error lists every problem) since nothing can be compared then.
nlohmann::json describePair(const std::filesystem::path& drafter, const std::filesystem::path& target,
                            const engine::ModelOptions& placement);

// Valid config, weights (if any) laid out as the config implies, and a target that fits its placement.
bool modelIsClean(const nlohmann::json& model);

std::string renderModel(const nlohmann::json& model);
std::string renderCompatibility(const nlohmann::json& compatibility);

}  // namespace dfi::eval
