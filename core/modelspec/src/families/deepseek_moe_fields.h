#pragma once
// Internal: the expert fields of DeepSeek-V3's mixture of experts, which GLM-4.5 (glm4_moe) and
// DeepSeek-V3 / Kimi K2 (deepseek_v3) read alike: n_routed_experts (alias num_local_experts),
// num_experts_per_tok, moe_intermediate_size, n_shared_experts, norm_topk_prob, n_group,
// topk_group, routed_scaling_factor, first_k_dense_replace. Only their config classes' defaults
// differ.

#include "family_module.h"

namespace dfi::modelspec::detail {

struct DeepseekMoeDefaults {
  int numExperts;
  int numExpertsPerToken;
  int numSharedExperts;
  int numGroups;
  int topkGroups;
  double routedScalingFactor;
  int firstDenseLayers;
};

// Fills c.moe (sigmoid scoring, router in fp32, ungated shared experts, dense layers below
// first_k_dense_replace); reports groups that cannot hold the chosen experts.
void readDeepseekMoe(const ConfigObject& level, TargetConfig& c,
                     const DeepseekMoeDefaults& defaults);

}  // namespace dfi::modelspec::detail
