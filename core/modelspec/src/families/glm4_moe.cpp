// GLM-4.5 / 4.6 / 4.7 (transformers models/glm4_moe): full grouped-query attention with partial
// rotary (half the head by default), optional per-head q/k norms (use_qk_norm) and attention_bias
// on q/k/v only; dense MLPs on the first first_k_dense_replace layers, then routed SwiGLU experts
// behind DeepSeek-V3's group-limited sigmoid router, plus ungated shared experts.
#include <algorithm>

#include "family_module.h"

namespace dfi::modelspec::detail {
namespace {

std::string text(int value) { return std::to_string(value); }

// The router's groups must split the experts evenly, and each group must hold the two experts
// its rank is summed from; the kept groups must hold k experts.
void checkGroups(const ConfigObject& level, const MoeConfig& moe) {
  if (moe.numGroups > moe.numExperts || moe.numExperts % moe.numGroups != 0) {
    level.problems().add(level.pathOf("n_group"), text(moe.numGroups) + " does not divide n_routed_experts " + text(moe.numExperts));
    return;
  }
  const int perGroup = moe.numExperts / moe.numGroups;
  if (moe.topkGroups > moe.numGroups)
    level.problems().add(level.pathOf("topk_group"), text(moe.topkGroups) + " exceeds n_group " + text(moe.numGroups));
  else if (moe.numGroups > 1 && perGroup < 2)
    level.problems().add(level.pathOf("n_group"), "groups of " + text(perGroup) +
                                                     " expert(s): a group is ranked by its two best experts");
  else if (moe.numExpertsPerToken > moe.topkGroups * perGroup)
    level.problems().add(level.pathOf("num_experts_per_tok"),
                         text(moe.numExpertsPerToken) + " exceeds the " + text(moe.topkGroups * perGroup) +
                             " experts of the topk_group kept groups");
}

// Glm4MoeConfig's expert fields (n_routed_experts, alias num_local_experts) with its defaults.
void readGlm4MoeExperts(const ConfigObject& level, TargetConfig& c) {
  MoeConfig moe;
  moe.numExperts = level.requiredInt(level.has("num_local_experts") ? "num_local_experts" : "n_routed_experts", 1).value_or(0);
  moe.numExpertsPerToken = level.optionalInt("num_experts_per_tok", 1).value_or(8);
  moe.moeIntermediateSize = level.requiredInt("moe_intermediate_size", 1).value_or(0);
  moe.sharedExpertIntermediateSize = moe.moeIntermediateSize * level.optionalInt("n_shared_experts", 0).value_or(1);
  moe.sharedExpertGated = false;
  moe.normTopkProb = level.optionalBool("norm_topk_prob").value_or(true);
  moe.scoring = RouterScoring::Sigmoid;
  moe.numGroups = level.optionalInt("n_group", 1).value_or(1);
  moe.topkGroups = level.optionalInt("topk_group", 1).value_or(1);
  moe.routedScalingFactor = level.optionalNumber("routed_scaling_factor").value_or(1.0);
  moe.routerInFp32 = true;  // _keep_in_fp32_modules_strict: gate.weight, e_score_correction_bias
  // Layers below first_k_dense_replace keep a dense MLP of intermediate_size.
  const int firstDense = level.optionalInt("first_k_dense_replace", 0).value_or(1);
  for (int i = 0; i < std::min(firstDense, c.numHiddenLayers); ++i) moe.mlpOnlyLayers.push_back(i);
  if (moe.numExperts > 0) checkGroups(level, moe);
  if (!(moe.routedScalingFactor > 0))
    level.problems().add(level.pathOf("routed_scaling_factor"),
                         "must be positive, found " + nlohmann::json(moe.routedScalingFactor).dump());
  c.moe = moe;
}

void readGlm4MoeLayers(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes.assign(c.numHiddenLayers, LayerType::FullAttention);
  c.traits.qkNorm = level.optionalBool("use_qk_norm").value_or(false);
  readGlm4MoeExperts(level, c);
}

}  // namespace

const FamilyModule& glm4MoeFamily() {
  static const FamilyModule module{
      .family = TargetFamily::Glm4Moe,
      .name = "GLM-4.5",
      // Its experts are read by readGlm4MoeExperts, not the Qwen MoE fields.
      .modelTypes = {{.modelType = "glm4_moe", .architectures = {"Glm4MoeForCausalLM"}}},
      // qkNorm is the file's use_qk_norm (readGlm4MoeLayers).
      .traits = {.norm = NormKind::Plain, .qkNorm = false, .attentionBiasOnOutput = false, .fixedTensorLayout = false},
      .geometry = {.headDimFromHeads = true, .rmsNormEps = 1e-5, .maxPositionEmbeddings = 131072},
      .readLayers = readGlm4MoeLayers,
      .defaultPartialRotaryFactor = 0.5,  // Glm4MoeConfig.__post_init__
  };
  return module;
}

}  // namespace dfi::modelspec::detail
