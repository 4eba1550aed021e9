#pragma once
// Rotary position embedding parameters as Hugging Face configs spell them (flat rope_theta +
// rope_scaling, or rope_parameters, possibly nested per layer type), normalised to one shape.
// Only the rope types the engine implements are accepted: "default", "yarn", "llama3" and
// "proportional" (Gemma 4's full-attention layers).

#include <optional>
#include <string>
#include <vector>

namespace dfi::modelspec {

struct RopeConfig {
  std::string type = "default";  // default | yarn | llama3 | proportional
  double theta = 10000;
  // Fraction of head_dim that is rotated. "proportional" rotates the whole head but gives only
  // this fraction of each half a nonzero frequency (the rest turn by angle zero).
  double partialRotaryFactor = 1.0;
  // YaRN, Llama 3 and proportional parameters (ignored for "default").
  double factor = 1.0;
  // The parsers fill it in (absent in the file: max_position_embeddings); 0 here means
  // "the model's max_position_embeddings" for hand-built values.
  double originalMaxPositionEmbeddings = 0;
  double betaFast = 32;
  double betaSlow = 1;
  std::optional<double> attentionFactor;  // absent: derived from factor (and mscale)
  std::optional<double> mscale;           // DeepSeek-style attention-factor terms
  std::optional<double> mscaleAllDim;
  bool truncate = true;  // YaRN: floor/ceil the correction range
  // Llama 3: wavelengths above original / low are divided by factor, those below
  // original / high kept, the band between blended smoothly.
  double lowFreqFactor = 1;
  double highFreqFactor = 4;
  // Qwen3.5 multimodal RoPE sections; with text-only positions (t = h = w) M-RoPE equals
  // plain 1-D RoPE, so these are informational for a text engine.
  std::vector<int> mropeSection;
  bool mropeInterleaved = false;

  // Number of rotated channels of a head: head_dim * partial_rotary_factor, as transformers
  // computes it (int() truncation); all of head_dim for "proportional".
  int rotaryDim(int headDim) const;

  bool operator==(const RopeConfig&) const = default;
};

// inv_freq of the rotated channels (rotaryDim/2 values), as transformers'
// ROPE_INIT_FUNCTIONS computes them for this rope type (in double precision here).
// maxPositionEmbeddings stands in for a zero originalMaxPositionEmbeddings.
std::vector<double> ropeInverseFrequencies(const RopeConfig& rope, int headDim,
                                           int maxPositionEmbeddings);
// The factor transformers multiplies cos and sin by (1 for "default").
double ropeAttentionScaling(const RopeConfig& rope);

}  // namespace dfi::modelspec
