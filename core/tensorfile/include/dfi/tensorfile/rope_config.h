#pragma once
// Rotary position embedding parameters as Hugging Face configs spell them (flat rope_theta +
// rope_scaling, or rope_parameters, possibly nested per layer type), normalised to one shape.
// Only the rope types the engine implements are accepted: "default" and "yarn".

#include <optional>
#include <string>
#include <vector>

namespace dfi::tensorfile {

struct RopeConfig {
  std::string type = "default";  // default | yarn
  double theta = 10000;
  double partialRotaryFactor = 1.0;  // fraction of head_dim that is rotated
  // YaRN parameters (ignored for "default").
  double factor = 1.0;
  double originalMaxPositionEmbeddings = 0;  // 0: use the model's max_position_embeddings
  double betaFast = 32;
  double betaSlow = 1;
  std::optional<double> attentionFactor;  // absent: 0.1*ln(factor)+1 (YaRN paper)
  bool truncate = true;                   // YaRN: floor/ceil the correction range
  // Qwen3.5 multimodal RoPE sections; with text-only positions (t = h = w) M-RoPE equals
  // plain 1-D RoPE, so these are informational for a text engine.
  std::vector<int> mropeSection;
  bool mropeInterleaved = false;

  // Number of rotated channels of a head: head_dim * partial_rotary_factor, as transformers
  // computes it (int() truncation).
  int rotaryDim(int headDim) const;
};

// inv_freq of the rotated channels (rotaryDim/2 values), as transformers'
// ROPE_INIT_FUNCTIONS computes them for this rope type. maxPositionEmbeddings is the model's
// value, used by YaRN when original_max_position_embeddings is absent.
std::vector<double> ropeInverseFrequencies(const RopeConfig& rope, int headDim,
                                           int maxPositionEmbeddings);
// The factor transformers multiplies cos and sin by (1 for "default").
double ropeAttentionScaling(const RopeConfig& rope);

}  // namespace dfi::tensorfile
