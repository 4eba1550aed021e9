#pragma once
// Internal: the decoder-layer geometry shared by targets and drafters (both are Qwen3-style
// decoder stacks), read and cross-checked in one place.

#include <optional>
#include <string_view>
#include <vector>

#include "config_json.h"

namespace dfi::tensorfile::detail {

// Bounds far above any real model that keep per-layer and per-channel tables of a hostile
// config small (a billion "layers" would otherwise be allocated before anything else fails).
constexpr int kMaxLayers = 100'000;
constexpr int kMaxHeadDim = 65'536;

struct DecoderGeometry {
  int hiddenSize = 0;
  int intermediateSize = 0;
  int numHiddenLayers = 0;
  int numAttentionHeads = 0;
  int numKeyValueHeads = 0;
  int headDim = 0;
  int vocabSize = 0;
  double rmsNormEps = 1e-6;
  bool attentionBias = false;
  int maxPositionEmbeddings = 32768;
};

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

}  // namespace dfi::tensorfile::detail
