#include "dfi/modelspec/layer_type.h"

#include <algorithm>

#include "layer_types_field.h"

namespace dfi::modelspec {

std::optional<LayerType> parseLayerType(std::string_view name) {
  if (name == "full_attention") return LayerType::FullAttention;
  if (name == "linear_attention") return LayerType::LinearAttention;
  if (name == "sliding_attention") return LayerType::SlidingAttention;
  return std::nullopt;
}

std::string_view layerTypeName(LayerType type) {
  switch (type) {
    case LayerType::FullAttention: return "full_attention";
    case LayerType::LinearAttention: return "linear_attention";
    case LayerType::SlidingAttention: return "sliding_attention";
  }
  return "unknown";
}

namespace detail {

std::optional<std::vector<LayerType>> readExplicitLayerTypes(
    const ConfigObject& level, int numLayers, std::initializer_list<LayerType> allowed) {
  std::optional<std::vector<std::string>> names = level.optionalStringList("layer_types");
  if (!names) return std::nullopt;
  const std::string field = level.pathOf("layer_types");
  if (numLayers > 0 && static_cast<int>(names->size()) != numLayers) {
    level.problems().add(field, "has " + std::to_string(names->size()) +
                                    " entries but num_hidden_layers is " +
                                    std::to_string(numLayers));
  }
  std::string allowedNames;
  for (LayerType t : allowed) allowedNames += (allowedNames.empty() ? "" : ", ") + std::string(layerTypeName(t));
  std::vector<LayerType> types;
  for (std::size_t i = 0; i < names->size(); ++i) {
    std::optional<LayerType> t = parseLayerType((*names)[i]);
    if (!t || std::find(allowed.begin(), allowed.end(), *t) == allowed.end()) {
      level.problems().add(field + "[" + std::to_string(i) + "]",
                           "unsupported layer type \"" + (*names)[i] + "\" for this model (supported: " +
                               allowedNames + ")");
      return std::nullopt;
    }
    types.push_back(*t);
  }
  return types;
}

std::vector<LayerType> qwen3LayerTypes(int numLayers, std::optional<int> slidingWindow,
                                       int maxWindowLayers) {
  std::vector<LayerType> types;
  for (int i = 0; i < numLayers; ++i)
    types.push_back(slidingWindow && i >= maxWindowLayers ? LayerType::SlidingAttention
                                                          : LayerType::FullAttention);
  return types;
}

std::vector<LayerType> hybridLayerTypes(int numLayers, int fullAttentionInterval) {
  std::vector<LayerType> types;
  for (int i = 0; i < numLayers; ++i)
    types.push_back((i + 1) % fullAttentionInterval == 0 ? LayerType::FullAttention
                                                         : LayerType::LinearAttention);
  return types;
}

}  // namespace detail
}  // namespace dfi::modelspec
