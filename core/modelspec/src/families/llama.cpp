// Llama 3.x (transformers models/llama): full attention without q/k norms, optional MLP biases,
// head_dim from the heads when absent.
#include "family_module.h"

namespace dfi::modelspec::detail {
namespace {

void readLlamaLayers(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes.assign(c.numHiddenLayers, LayerType::FullAttention);
  c.mlpBias = level.optionalBool("mlp_bias").value_or(false);
}

}  // namespace

const FamilyModule& llamaFamily() {
  static const FamilyModule module{
      .family = TargetFamily::Llama,
      .name = "Llama",
      .modelTypes = {{.modelType = "llama", .architectures = {"LlamaForCausalLM"}}},
      .traits = {.norm = NormKind::Plain, .qkNorm = false},
      .geometry = {.kvHeadsDefaultToHeads = true, .headDimFromHeads = true, .maxPositionEmbeddings = 2048},
      .readLayers = readLlamaLayers,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
