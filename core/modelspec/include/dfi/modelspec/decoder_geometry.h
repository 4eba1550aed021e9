#pragma once
// The decoder-stack geometry a target and a drafter share (both are Qwen3-style decoder
// stacks): read and cross-checked in one place (readDecoderGeometry), held once by both
// configs, and listed by one field table for reports.

#include <string_view>
#include <variant>

namespace dfi::modelspec {

struct DecoderGeometry {
  int hiddenSize = 0;
  int intermediateSize = 0;  // dense MLP width; 0 for Qwen3.5-MoE, which has none
  int numHiddenLayers = 0;
  int numAttentionHeads = 0;
  int numKeyValueHeads = 0;
  int headDim = 0;
  int vocabSize = 0;
  double rmsNormEps = 1e-6;
  bool attentionBias = false;
  int maxPositionEmbeddings = 32768;
};

// One row of the field table: the config.json key and the member it fills.
struct GeometryField {
  std::string_view key;
  std::variant<int DecoderGeometry::*, double DecoderGeometry::*, bool DecoderGeometry::*> member;
};

inline constexpr GeometryField kGeometryFields[] = {
    {"hidden_size", &DecoderGeometry::hiddenSize},
    {"intermediate_size", &DecoderGeometry::intermediateSize},
    {"num_hidden_layers", &DecoderGeometry::numHiddenLayers},
    {"num_attention_heads", &DecoderGeometry::numAttentionHeads},
    {"num_key_value_heads", &DecoderGeometry::numKeyValueHeads},
    {"head_dim", &DecoderGeometry::headDim},
    {"vocab_size", &DecoderGeometry::vocabSize},
    {"rms_norm_eps", &DecoderGeometry::rmsNormEps},
    {"attention_bias", &DecoderGeometry::attentionBias},
    {"max_position_embeddings", &DecoderGeometry::maxPositionEmbeddings},
};

}  // namespace dfi::modelspec
