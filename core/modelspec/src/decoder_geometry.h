#pragma once
// Internal: reading the decoder geometry (dfi/modelspec/decoder_geometry.h) from a config level.

#include <optional>
#include <string_view>
#include <vector>

#include "config_json.h"
#include "dfi/modelspec/decoder_geometry.h"

namespace dfi::modelspec::detail {

// Bounds far above any real model that keep per-layer and per-channel tables of a hostile
// config small (a billion "layers" would otherwise be allocated before anything else fails).
constexpr int kMaxLayers = 100'000;
constexpr int kMaxHeadDim = 65'536;

// What a family's transformers config class fills in for an absent field.
struct GeometryDefaults {
  bool kvHeadsDefaultToHeads = false;  // Qwen3, Llama, gpt-oss: num_key_value_heads = heads
  std::optional<int> headDim;          // gpt-oss: the class default 64 (nullopt: required)
  bool headDimFromHeads = false;       // Llama: hidden_size / num_attention_heads
  double rmsNormEps = 1e-6;
  bool attentionBias = false;
  int maxPositionEmbeddings = 32768;
  bool hasDenseMlp = true;  // false for Qwen3.5-MoE: no intermediate_size (0 unless given)
};

// Shape-defining fields are required (a guessed default would silently mis-size every
// tensor) unless the model's transformers class defines the default (GeometryDefaults).
DecoderGeometry readDecoderGeometry(const ConfigObject& level, const GeometryDefaults& defaults);

// Token ids that may be one integer or a list (eos_token_id), looked up in `level` first and
// then in `fallback` (a nested text_config inherits the top-level ids).
std::vector<int> readTokenIds(const ConfigObject& level, const ConfigObject* fallback,
                              std::string_view key);

}  // namespace dfi::modelspec::detail
