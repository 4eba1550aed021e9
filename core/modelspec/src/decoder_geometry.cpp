#include "decoder_geometry.h"

namespace dfi::modelspec::detail {

DecoderGeometry readDecoderGeometry(const ConfigObject& level, const GeometryDefaults& defaults) {
  DecoderGeometry g;
  g.hiddenSize = level.requiredInt("hidden_size", 1).value_or(0);
  g.intermediateSize = defaults.hasDenseMlp ? level.requiredInt("intermediate_size", 1).value_or(0)
                                   : level.optionalInt("intermediate_size", 1).value_or(0);
  g.numHiddenLayers = level.requiredInt("num_hidden_layers", 1, kMaxLayers).value_or(0);
  g.numAttentionHeads = level.requiredInt("num_attention_heads", 1).value_or(0);
  g.numKeyValueHeads = defaults.kvHeadsDefaultToHeads && !level.has("num_key_value_heads")
                           ? g.numAttentionHeads
                           : level.requiredInt("num_key_value_heads", 1).value_or(0);
  if (level.has("head_dim") || (!defaults.headDim && !defaults.headDimFromHeads))
    g.headDim = level.requiredInt("head_dim", 1, kMaxHeadDim).value_or(0);
  else if (defaults.headDim)
    g.headDim = *defaults.headDim;
  else if (g.numAttentionHeads > 0)
    g.headDim = g.hiddenSize / g.numAttentionHeads;
  g.vocabSize = level.requiredInt("vocab_size", 1).value_or(0);
  g.rmsNormEps = level.optionalNumber("rms_norm_eps").value_or(defaults.rmsNormEps);
  if (!(g.rmsNormEps > 0 && g.rmsNormEps < 1))
    level.problems().add(level.pathOf("rms_norm_eps"),
                         "must be in (0, 1), found " + nlohmann::json(g.rmsNormEps).dump());
  g.attentionBias = level.optionalBool("attention_bias").value_or(defaults.attentionBias);
  g.maxPositionEmbeddings = level.optionalInt("max_position_embeddings", 1).value_or(defaults.maxPositionEmbeddings);

  // Grouped-query attention shares each key/value head among heads/kv query heads.
  if (g.numAttentionHeads > 0 && g.numKeyValueHeads > 0 &&
      g.numAttentionHeads % g.numKeyValueHeads != 0) {
    level.problems().add(level.pathOf("num_key_value_heads"),
                         std::to_string(g.numKeyValueHeads) + " does not divide num_attention_heads " +
                             std::to_string(g.numAttentionHeads));
  }
  return g;
}

std::vector<int> readTokenIds(const ConfigObject& level, const ConfigObject* fallback,
                              std::string_view key) {
  if (level.has(key)) return level.optionalIntList(key, 0).value_or(std::vector<int>{});
  if (fallback && fallback->has(key)) return fallback->optionalIntList(key, 0).value_or(std::vector<int>{});
  return {};
}

}  // namespace dfi::modelspec::detail
