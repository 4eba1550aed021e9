// Qwen3.5 / Qwen3.6, dense and MoE (transformers models/qwen3_5, models/qwen3_5_moe): a
// vision-language config whose language model sits under text_config, hybrid Gated DeltaNet
// and gated attention layers, zero-centred RMSNorm, a quarter of each head rotated.
#include "family_module.h"
#include "hybrid_layers.h"

namespace dfi::modelspec::detail {

const FamilyModule& qwen3_5Family() {
  static const FamilyModule module{
      .family = TargetFamily::Qwen3_5,
      .name = "Qwen3.5",
      .modelTypes =
          {{.modelType = "qwen3_5",
            .nestedTextConfig = true,
            .textModelTypes = {"qwen3_5_text"},
            .architectures = {"Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM"}},
           // What Qwen3_5ForCausalLM.save_pretrained writes: the text config, flat.
           {.modelType = "qwen3_5_text", .architectures = {"Qwen3_5ForCausalLM"}},
           {.modelType = "qwen3_5_moe",
            .nestedTextConfig = true,
            .textModelTypes = {"qwen3_5_moe_text"},
            .moe = MoeFields::Qwen3_5Moe,
            .architectures = {"Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM"}},
           {.modelType = "qwen3_5_moe_text", .moe = MoeFields::Qwen3_5Moe, .architectures = {"Qwen3_5MoeForCausalLM"}}},
      .traits = {.norm = NormKind::ZeroCentred, .qkNorm = true},
      .geometry = {},
      .readLayers = readHybridLayers,
      .defaultPartialRotaryFactor = 0.25,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
