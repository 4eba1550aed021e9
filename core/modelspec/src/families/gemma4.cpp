// Gemma 4's text model (transformers models/gemma4: Gemma4TextConfig, Gemma4ForCausalLM, and the
// language model of Gemma4ForConditionalGeneration): sliding and full attention layers, each
// type with its own head width and RoPE; q/k norms and a weightless value norm; norms around
// attention and the feed-forward block; a GELU-tanh MLP with, on the MoE variant (26B-A4B),
// routed experts beside it; per-layer input embeddings; KV-shared layers; logit soft-capping.
#include "../layer_types_field.h"
#include "../rope_field.h"
#include "family_module.h"

namespace dfi::modelspec::detail {
namespace {

// Gemma4TextConfig: five sliding layers then a full one unless layer_types says otherwise, the
// last layer always full attention (the class forces it).
void readGemma4LayerTypes(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes = readExplicitLayerTypes(level, c.numHiddenLayers, {LayerType::FullAttention, LayerType::SlidingAttention})
                     .value_or(std::vector<LayerType>{});
  if (c.layerTypes.empty() && !level.has("layer_types"))
    for (int i = 0; i < c.numHiddenLayers; ++i)
      c.layerTypes.push_back((i + 1) % 6 ? LayerType::SlidingAttention : LayerType::FullAttention);
  if (!c.layerTypes.empty()) c.layerTypes.back() = LayerType::FullAttention;
  c.slidingWindow = level.optionalInt("sliding_window", 1).value_or(512);
  // "all" makes every layer bidirectional (an encoder); "vision" only concerns image tokens,
  // so text stays causal.
  if (level.optionalString("use_bidirectional_attention") == std::optional<std::string>("all"))
    level.problems().add(level.pathOf("use_bidirectional_attention"),
                         "\"all\" (bidirectional attention) is not supported: the engine decodes causally");
}

// Per-layer head width and key/value heads. A config transformers saved lists them per layer
// (per_layer_config); a published one gives global_head_dim (class default 512) and, with
// attention_k_eq_v, num_global_key_value_heads for the full-attention layers.
void readGemma4AttentionShapes(const ConfigObject& level, TargetConfig& c) {
  c.attentionKEqV = level.optionalBool("attention_k_eq_v").value_or(false);
  const AttentionShape base{c.headDim, c.numKeyValueHeads};
  c.layerAttention.assign(c.layerTypes.size(), base);
  if (std::optional<ConfigObject> perLayer = level.optionalObject("per_layer_config")) {
    for (const auto& [key, value] : perLayer->json().items()) {
      const int layer = std::atoi(key.c_str());
      if (std::to_string(layer) != key || layer < 0 || layer >= static_cast<int>(c.layerAttention.size())) {
        level.problems().add(perLayer->pathOf(key), "is not a layer index below num_hidden_layers");
        continue;
      }
      const std::optional<ConfigObject> entry = perLayer->optionalObject(key);
      if (!entry) continue;
      for (const auto& [field, unused] : entry->json().items())
        if (field != "head_dim" && field != "num_key_value_heads")
          level.problems().add(entry->pathOf(field), "per-layer override not supported (supported: head_dim, "
                                                     "num_key_value_heads)");
      c.layerAttention[layer].headDim = entry->optionalInt("head_dim", 1, kMaxHeadDim).value_or(base.headDim);
      c.layerAttention[layer].numKeyValueHeads =
          entry->optionalInt("num_key_value_heads", 1).value_or(base.numKeyValueHeads);
    }
  } else {
    const int globalHeadDim = level.optionalInt("global_head_dim", 1, kMaxHeadDim).value_or(512);
    const std::optional<int> globalKvHeads =
        c.attentionKEqV ? level.optionalInt("num_global_key_value_heads", 1) : std::nullopt;
    for (std::size_t i = 0; i < c.layerTypes.size(); ++i)
      if (c.layerTypes[i] == LayerType::FullAttention)
        c.layerAttention[i] = {globalHeadDim, globalKvHeads.value_or(base.numKeyValueHeads)};
  }
  for (std::size_t i = 0; i < c.layerAttention.size(); ++i)
    if (c.numAttentionHeads % c.layerAttention[i].numKeyValueHeads != 0)
      level.problems().add(level.pathOf("per_layer_config"),
                           "layer " + std::to_string(i) + ": " + std::to_string(c.layerAttention[i].numKeyValueHeads) +
                               " key/value heads do not divide num_attention_heads " +
                               std::to_string(c.numAttentionHeads));
}

// num_kv_shared_layers: the last n layers compute no keys or values; each reads those of the
// last earlier layer of its own type, so every shared type needs such a layer.
void readGemma4KvSharing(const ConfigObject& level, TargetConfig& c) {
  c.numKvSharedLayers = level.optionalInt("num_kv_shared_layers", 0, c.numHiddenLayers).value_or(0);
  const int firstShared = c.numHiddenLayers - c.numKvSharedLayers;
  for (int i = firstShared; i < static_cast<int>(c.layerTypes.size()); ++i)
    if (c.kvSourceLayer(i) == i) {
      level.problems().add(level.pathOf("num_kv_shared_layers"),
                           "layer " + std::to_string(i) + " shares the keys and values of an earlier " +
                               std::string(layerTypeName(c.layerTypes[i])) + " layer, but none computes them");
      break;
    }
  c.useDoubleWideMlp = level.optionalBool("use_double_wide_mlp").value_or(false);
}

// enable_moe_block: every layer adds num_experts experts of moe_intermediate_size (top
// top_k_experts per token, renormalised) to its dense MLP's output.
void readGemma4Experts(const ConfigObject& level, TargetConfig& c) {
  if (!level.optionalBool("enable_moe_block").value_or(false)) return;
  MoeConfig moe;
  moe.numExperts = level.requiredInt("num_experts", 1).value_or(0);
  moe.numExpertsPerToken = level.requiredInt("top_k_experts", 1).value_or(0);
  moe.moeIntermediateSize = level.requiredInt("moe_intermediate_size", 1).value_or(0);
  if (moe.numExperts > 0 && moe.numExpertsPerToken > moe.numExperts)
    level.problems().add(level.pathOf("top_k_experts"), std::to_string(moe.numExpertsPerToken) +
                                                           " exceeds num_experts " + std::to_string(moe.numExperts));
  c.moe = moe;
}

void readGemma4Layers(const ConfigObject& level, TargetConfig& c) {
  readGemma4LayerTypes(level, c);
  readGemma4AttentionShapes(level, c);
  readGemma4KvSharing(level, c);
  readGemma4Experts(level, c);
  if (auto activation = level.optionalString("hidden_activation"); activation && *activation != "gelu_pytorch_tanh")
    level.problems().add(level.pathOf("hidden_activation"),
                         "\"" + *activation + "\" is not supported (supported: gelu_pytorch_tanh)");
  // hidden_size_per_layer_input defaults to 256 in the class; 0 (or null) turns the inputs off.
  const int perLayer = level.json().contains("hidden_size_per_layer_input") &&
                               level.json()["hidden_size_per_layer_input"].is_null()
                           ? 0
                           : level.optionalInt("hidden_size_per_layer_input", 0).value_or(256);
  if (perLayer > 0)
    c.perLayerInputs = PerLayerInputs{perLayer, level.optionalInt("vocab_size_per_layer_input", 1).value_or(262144)};
  c.finalLogitSoftcapping = level.optionalNumber("final_logit_softcapping");
  if (c.finalLogitSoftcapping && !(*c.finalLogitSoftcapping > 0))
    level.problems().add(level.pathOf("final_logit_softcapping"), "must be positive");
}

// Gemma4TextConfig's rope when the file has none: default theta 10000 on sliding layers,
// proportional theta 1e6 over a quarter of each half on full ones.
void readGemma4Ropes(const ConfigObject& level, TargetConfig& c) {
  RopeConfig full{.type = "proportional", .theta = 1e6, .partialRotaryFactor = 0.25};
  RopeConfig sliding{.type = "default", .theta = 10000};
  if (level.has("rope_parameters")) {
    const RopeContext context{.layerTypes = c.layerTypes, .maxPositionEmbeddings = c.maxPositionEmbeddings};
    full = readRopeOfLayerType(level, LayerType::FullAttention, context).value_or(full);
    if (c.numLayersOfType(LayerType::SlidingAttention) > 0)
      sliding = readRopeOfLayerType(level, LayerType::SlidingAttention, context).value_or(sliding);
  }
  c.rope = full;
  c.slidingRope = sliding;
}

}  // namespace

const FamilyModule& gemma4Family() {
  static const FamilyModule module{
      .family = TargetFamily::Gemma4,
      .name = "Gemma 4",
      .modelTypes = {{.modelType = "gemma4_text", .architectures = {"Gemma4ForCausalLM"}},
                     {.modelType = "gemma4",
                      .nestedTextConfig = true,
                      .textModelTypes = {"gemma4_text"},
                      .architectures = {"Gemma4ForConditionalGeneration"}}},
      .traits = {.norm = NormKind::Fp32Compute,
                 .qkNorm = true,
                 .mlp = MlpKind::Gemma4,
                 .activation = MlpActivation::GeluTanh,
                 .sandwichNorms = true,
                 .scaledEmbeddings = true,
                 .unitAttentionScale = true,
                 .valueNorm = true,
                 .fixedTensorLayout = false},
      .geometry = {.headDim = 256, .maxPositionEmbeddings = 131072},
      .readLayers = readGemma4Layers,
      .readRopes = readGemma4Ropes,
      .tiesWordEmbeddingsByDefault = true,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
