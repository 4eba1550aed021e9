#pragma once
// Internal: reads RoPE parameters from every spelling transformers accepts and normalises
// them into one RopeConfig.

#include <optional>
#include <vector>

#include "config_json.h"
#include "dfi/modelspec/layer_type.h"
#include "dfi/modelspec/rope_config.h"

namespace dfi::modelspec::detail {

struct RopeContext {
  std::vector<LayerType> layerTypes;  // decides whether rope_parameters is nested by type
  std::optional<double> defaultPartialRotaryFactor;  // Qwen3.5 / Next: 0.25
  int maxPositionEmbeddings = 0;
  int headDim = 0;  // 0 when unknown (then the rotary width is not checked)
  std::optional<double> defaultTheta;  // the config class's default_theta (gpt-oss: 150000)
};

// `level` is the object holding the language-model fields (root or text_config).
RopeConfig readRope(const ConfigObject& level, const RopeContext& context);

// The rope of one layer type from rope_parameters nested by layer type (Gemma 4, where the
// types differ); nullopt, with a problem added, when that entry is missing.
std::optional<RopeConfig> readRopeOfLayerType(const ConfigObject& level, LayerType type, const RopeContext& context);

}  // namespace dfi::modelspec::detail
