#pragma once
// The data behind `dflash-eval info`: one JSON document per model (kind, geometry, weights,
// validation) and per drafter/target pair (compatibility). --json prints it as is; the
// human form is rendered from the same document, so both always say the same thing.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dfi::eval {

// A model directory (or its config.json). Config problems ("validation") and tensors that do
// not match the config ("weight_layout") are reported rather than thrown; unreadable or
// malformed files still throw dfi::Error.
// targetNumLayers feeds a drafter's default tap rule when its config names no target depth.
nlohmann::json describeModel(const std::filesystem::path& dirOrConfig, std::optional<int> targetNumLayers = {});

// Both models plus the compatibility report of the drafter against the target. Invalid
// configs throw (the error lists every problem) since nothing can be compared then.
nlohmann::json describePair(const std::filesystem::path& drafter, const std::filesystem::path& target);

// Valid config, and weights (if any) laid out as the config implies.
bool modelIsClean(const nlohmann::json& model);

std::string renderModel(const nlohmann::json& model);
std::string renderCompatibility(const nlohmann::json& compatibility);

}  // namespace dfi::eval
