#pragma once
// The per-layer attention kind of a decoder stack ("layer_types" in Hugging Face configs).

#include <optional>
#include <string_view>

namespace dfi::modelspec {

enum class LayerType { FullAttention, LinearAttention, SlidingAttention };

// "full_attention" | "linear_attention" | "sliding_attention"; nullopt otherwise.
std::optional<LayerType> parseLayerType(std::string_view name);
std::string_view layerTypeName(LayerType type);

}  // namespace dfi::modelspec
