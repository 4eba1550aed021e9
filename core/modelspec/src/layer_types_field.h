#pragma once
// Internal: the layer_types field and the rules transformers uses when it is absent.

#include <initializer_list>
#include <optional>
#include <vector>

#include "config_json.h"
#include "dfi/modelspec/layer_type.h"

namespace dfi::modelspec::detail {

// The explicit `layer_types` list of `level` (which wins over any rule), checked against the
// layer count and the types this model kind implements; nullopt when absent or invalid.
std::optional<std::vector<LayerType>> readExplicitLayerTypes(
    const ConfigObject& level, int numLayers, std::initializer_list<LayerType> allowed);

// Qwen3Config: layers from max_window_layers on slide when a sliding window is in use.
std::vector<LayerType> qwen3LayerTypes(int numLayers, std::optional<int> slidingWindow,
                                       int maxWindowLayers);
// Qwen3.5 / Qwen3-Next: every full_attention_interval-th layer is full attention, the
// others Gated DeltaNet.
std::vector<LayerType> hybridLayerTypes(int numLayers, int fullAttentionInterval);

}  // namespace dfi::modelspec::detail
