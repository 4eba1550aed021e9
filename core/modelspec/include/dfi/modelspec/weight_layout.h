#pragma once
// The tensors a config implies (names and shapes, as transformers and z-lab lay them out),
// checked against what a checkpoint's headers hold. This catches a config that does not
// describe its weights -- wrong head count, wrong intermediate size, missing lm_head when not
// tied -- before any weight is read.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/tensorfile/shape_text.h"
#include "dfi/modelspec/target_config.h"

namespace dfi::modelspec {

struct ExpectedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
};

// Text-engine names (after tensorfile::NameMapping::qwenText). Qwen3-Next, every mixture-of-experts
// model (experts are stored in more than one layout) and quantised checkpoints (each format's
// parts, checked at load) are not covered: nullopt.
std::optional<std::vector<ExpectedTensor>> expectedTargetTensors(const TargetConfig& config);
// fc.weight's input width is taps x targetHiddenSize (the drafter's own hidden size when the
// target is unknown, as z-lab builds it).
std::vector<ExpectedTensor> expectedDrafterTensors(const DrafterConfig& config, std::optional<int> targetHiddenSize = {});

struct LayoutIssue {
  std::string tensor;
  std::string expected;  // shape, or "absent"
  std::string found;     // shape, or "absent"
};

// Every missing tensor, wrong shape and tensor the config does not explain.
std::vector<LayoutIssue> checkWeightLayout(const std::vector<ExpectedTensor>& expected, const tensorfile::Checkpoint& checkpoint);

}  // namespace dfi::modelspec
