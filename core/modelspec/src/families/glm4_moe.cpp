// GLM-4.5 / 4.6 / 4.7 (transformers models/glm4_moe): full grouped-query attention with partial
// rotary (half the head by default), optional per-head q/k norms (use_qk_norm) and attention_bias
// on q/k/v only; dense MLPs on the first first_k_dense_replace layers, then routed SwiGLU experts
// behind DeepSeek-V3's group-limited sigmoid router, plus ungated shared experts.
#include "deepseek_moe_fields.h"

namespace dfi::modelspec::detail {
namespace {

void readGlm4MoeLayers(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes.assign(c.numHiddenLayers, LayerType::FullAttention);
  c.traits.qkNorm = level.optionalBool("use_qk_norm").value_or(false);
  // Glm4MoeConfig's defaults.
  readDeepseekMoe(level, c,
                  {.numExperts = 128,
                   .numExpertsPerToken = 8,
                   .numSharedExperts = 1,
                   .numGroups = 1,
                   .topkGroups = 1,
                   .routedScalingFactor = 1.0,
                   .firstDenseLayers = 1});
}

}  // namespace

const FamilyModule& glm4MoeFamily() {
  static const FamilyModule module{
      .family = TargetFamily::Glm4Moe,
      .name = "GLM-4.5",
      // Its experts are read by readDeepseekMoe, not the Qwen MoE fields.
      .modelTypes = {{.modelType = "glm4_moe", .architectures = {"Glm4MoeForCausalLM"}}},
      // qkNorm is the file's use_qk_norm (readGlm4MoeLayers).
      .traits = {.norm = NormKind::Plain,
                 .qkNorm = false,
                 .attentionBiasOnOutput = false,
                 .fixedTensorLayout = false},
      .geometry = {.headDimFromHeads = true, .rmsNormEps = 1e-5, .maxPositionEmbeddings = 131072},
      .readLayers = readGlm4MoeLayers,
      .defaultPartialRotaryFactor = 0.5,  // Glm4MoeConfig.__post_init__
  };
  return module;
}

}  // namespace dfi::modelspec::detail
