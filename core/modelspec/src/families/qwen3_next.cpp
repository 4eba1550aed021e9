// Qwen3-Next (transformers models/qwen3_next): the hybrid layers of Qwen3.5 in a flat config,
// with experts and a shared expert; its fused projections are stored in more than one layout.
#include "family_module.h"
#include "hybrid_layers.h"

namespace dfi::modelspec::detail {

const FamilyModule& qwen3NextFamily() {
  static const FamilyModule module{
      .family = TargetFamily::Qwen3Next,
      .name = "Qwen3-Next",
      .modelTypes = {{.modelType = "qwen3_next", .moe = MoeFields::Qwen3Next, .architectures = {"Qwen3NextForCausalLM"}}},
      .traits = {.norm = NormKind::ZeroCentred, .qkNorm = true, .fixedTensorLayout = false},
      .geometry = {},
      .readLayers = readHybridLayers,
      .defaultPartialRotaryFactor = 0.25,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
