#include "deepseek_moe_fields.h"

#include <algorithm>

namespace dfi::modelspec::detail {
namespace {

std::string text(int value) { return std::to_string(value); }

// The router's groups must split the experts evenly, and each group must hold the two experts
// its rank is summed from; the kept groups must hold k experts.
void checkGroups(const ConfigObject& level, const MoeConfig& moe) {
  if (moe.numGroups > moe.numExperts || moe.numExperts % moe.numGroups != 0) {
    level.problems().add(
        level.pathOf("n_group"),
        text(moe.numGroups) + " does not divide n_routed_experts " + text(moe.numExperts));
    return;
  }
  const int perGroup = moe.numExperts / moe.numGroups;
  if (moe.topkGroups > moe.numGroups)
    level.problems().add(level.pathOf("topk_group"),
                         text(moe.topkGroups) + " exceeds n_group " + text(moe.numGroups));
  else if (moe.numGroups > 1 && perGroup < 2)
    level.problems().add(
        level.pathOf("n_group"),
        "groups of " + text(perGroup) + " expert(s): a group is ranked by its two best experts");
  else if (moe.numExpertsPerToken > moe.topkGroups * perGroup)
    level.problems().add(level.pathOf("num_experts_per_tok"),
                         text(moe.numExpertsPerToken) + " exceeds the " +
                             text(moe.topkGroups * perGroup) +
                             " experts of the topk_group kept groups");
}

}  // namespace

void readDeepseekMoe(const ConfigObject& level, TargetConfig& c,
                     const DeepseekMoeDefaults& defaults) {
  MoeConfig moe;
  const char* expertsKey =
      level.has("num_local_experts") ? "num_local_experts" : "n_routed_experts";
  moe.numExperts = level.optionalInt(expertsKey, 1).value_or(defaults.numExperts);
  moe.numExpertsPerToken =
      level.optionalInt("num_experts_per_tok", 1).value_or(defaults.numExpertsPerToken);
  moe.moeIntermediateSize = level.requiredInt("moe_intermediate_size", 1).value_or(0);
  moe.sharedExpertIntermediateSize =
      moe.moeIntermediateSize *
      level.optionalInt("n_shared_experts", 0).value_or(defaults.numSharedExperts);
  moe.sharedExpertGated = false;
  moe.normTopkProb = level.optionalBool("norm_topk_prob").value_or(true);
  moe.scoring = RouterScoring::Sigmoid;
  moe.numGroups = level.optionalInt("n_group", 1).value_or(defaults.numGroups);
  moe.topkGroups = level.optionalInt("topk_group", 1).value_or(defaults.topkGroups);
  moe.routedScalingFactor =
      level.optionalNumber("routed_scaling_factor").value_or(defaults.routedScalingFactor);
  moe.routerInFp32 = true;  // _keep_in_fp32_modules_strict: gate.weight, e_score_correction_bias
  // Layers below first_k_dense_replace keep a dense MLP of intermediate_size.
  const int firstDense =
      level.optionalInt("first_k_dense_replace", 0).value_or(defaults.firstDenseLayers);
  for (int i = 0; i < std::min(firstDense, c.numHiddenLayers); ++i) moe.mlpOnlyLayers.push_back(i);
  if (moe.numExperts > 0) checkGroups(level, moe);
  if (!(moe.routedScalingFactor > 0))
    level.problems().add(
        level.pathOf("routed_scaling_factor"),
        "must be positive, found " + nlohmann::json(moe.routedScalingFactor).dump());
  c.moe = moe;
}

}  // namespace dfi::modelspec::detail
