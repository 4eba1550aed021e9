#pragma once
// The prompt-format lint of a diagnosis: what the target's chat template leaves to its own
// defaults in this run, and whether the drafter's training format (its own chat template, or
// --training-template) renders the same prompt as the target's template.

#include <filesystem>
#include <vector>

#include "dfi/analysis/diagnosis.h"
#include "evaluation/diagnosis/diagnosis_battery.h"

namespace dfi::engine {

std::vector<analysis::LintFinding> templateLint(const BatteryInputs& in, const std::filesystem::path& drafterDir);

}  // namespace dfi::engine
