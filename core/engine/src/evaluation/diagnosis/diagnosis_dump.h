#pragma once
// `diagnose --training-dump`: the features a training pipeline fed the drafter, checked against
// this target's layers tensor by tensor. The dump is SpecForge's offline feature layout as a
// safetensors file: `input_ids` ([T] or [1, T]) and `aux_hidden_state` ([T, F*H] or [1, T, F*H],
// the F taps side by side). Each tap's slice is compared with every layer's output (and the
// embedding, layer -1) on the same ids: the layer it matches is the layer the drafter was
// trained on, whatever its config says.

#include <filesystem>
#include <vector>

#include "dfi/analysis/diagnosis.h"
#include "dfi/modelspec/drafter_config.h"
#include "models/target_model.h"

namespace dfi::engine {

// Relative RMS difference under which a tap is taken to be a layer's output.
inline constexpr double kTapMatchTolerance = 0.05;

// One finding per tap (info when it is the configured layer, error when another layer, warning
// when none), or one error naming the tensor and its shape when the dump cannot be read as taps.
std::vector<analysis::LintFinding> trainingDumpFindings(const std::filesystem::path& dump, const TargetModel& target,
                                                        const modelspec::DrafterConfig& drafter);

}  // namespace dfi::engine
