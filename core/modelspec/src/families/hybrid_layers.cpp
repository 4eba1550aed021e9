#include "hybrid_layers.h"

#include "../layer_types_field.h"

namespace dfi::modelspec::detail {

void readHybridLayers(const ConfigObject& level, TargetConfig& c) {
  std::optional<std::vector<LayerType>> explicitTypes =
      readExplicitLayerTypes(level, c.numHiddenLayers, {LayerType::FullAttention, LayerType::LinearAttention});
  if (explicitTypes) {
    c.layerTypes = *explicitTypes;
  } else if (!level.has("layer_types")) {
    int interval = level.optionalInt("full_attention_interval", 1).value_or(4);
    c.layerTypes = hybridLayerTypes(c.numHiddenLayers, interval);
  }
  // transformers' Qwen3.5 / Next attention always has the output gate.
  if (level.optionalBool("attn_output_gate").value_or(true) == false)
    level.problems().add(level.pathOf("attn_output_gate"),
                         "false is not supported: this architecture always gates attention output");
  c.attnOutputGate = true;
  c.linearConvKernelDim = level.requiredInt("linear_conv_kernel_dim", 1).value_or(0);
  c.linearKeyHeadDim = level.requiredInt("linear_key_head_dim", 1).value_or(0);
  c.linearValueHeadDim = level.requiredInt("linear_value_head_dim", 1).value_or(0);
  c.linearNumKeyHeads = level.requiredInt("linear_num_key_heads", 1).value_or(0);
  c.linearNumValueHeads = level.requiredInt("linear_num_value_heads", 1).value_or(0);
  // Gated DeltaNet repeats each key head over linear_num_value_heads / linear_num_key_heads
  // value heads.
  if (c.linearNumKeyHeads > 0 && c.linearNumValueHeads % c.linearNumKeyHeads != 0)
    level.problems().add(level.pathOf("linear_num_value_heads"),
                         std::to_string(c.linearNumValueHeads) + " is not a multiple of linear_num_key_heads " +
                             std::to_string(c.linearNumKeyHeads));
}

}  // namespace dfi::modelspec::detail
