// Qwen3 and Qwen3-MoE (transformers models/qwen3, models/qwen3_moe): full attention with
// optional sliding windows, q/k norms, plain RMSNorm.
#include "../layer_types_field.h"
#include "family_module.h"

namespace dfi::modelspec::detail {
namespace {

void readQwen3Layers(const ConfigObject& level, TargetConfig& c) {
  // Qwen3Config keeps sliding_window only when use_sliding_window is set; an absent
  // sliding_window (not null) means the class default 4096.
  if (level.optionalBool("use_sliding_window").value_or(false)) {
    if (level.has("sliding_window")) c.slidingWindow = level.optionalInt("sliding_window", 1);
    else if (!level.json().contains("sliding_window")) c.slidingWindow = 4096;
  }
  int maxWindowLayers = level.optionalInt("max_window_layers", 0).value_or(28);
  c.layerTypes = readExplicitLayerTypes(level, c.numHiddenLayers, {LayerType::FullAttention, LayerType::SlidingAttention})
                     .value_or(qwen3LayerTypes(c.numHiddenLayers, c.slidingWindow, maxWindowLayers));
  if (c.numLayersOfType(LayerType::SlidingAttention) > 0 && !c.slidingWindow)
    level.problems().add(level.pathOf("sliding_window"),
                         "layer_types has sliding_attention layers but no sliding window is in use "
                         "(use_sliding_window false or sliding_window null)");
}

}  // namespace

const FamilyModule& qwen3Family() {
  static const FamilyModule module{
      .family = TargetFamily::Qwen3,
      .name = "Qwen3",
      .modelTypes = {{.modelType = "qwen3", .architectures = {"Qwen3ForCausalLM"}},
                     {.modelType = "qwen3_moe", .moe = MoeFields::Qwen3Moe, .architectures = {"Qwen3MoeForCausalLM"}}},
      .traits = {.norm = NormKind::Plain, .qkNorm = true},
      .geometry = {.kvHeadsDefaultToHeads = true},
      .readLayers = readQwen3Layers,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
