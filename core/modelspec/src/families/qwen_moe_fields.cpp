#include "qwen_moe_fields.h"

namespace dfi::modelspec::detail {
namespace {

// Qwen3MoeConfig maps num_experts onto num_local_experts (its attribute_map): save_pretrained
// writes the latter, published checkpoints the former.
std::optional<int> readNumExperts(const ConfigObject& level, MoeFields fields) {
  const bool local = fields == MoeFields::Qwen3Moe && level.has("num_local_experts");
  if (local && level.has("num_experts"))
    level.problems().add(level.pathOf("num_local_experts"),
                         "both num_experts and num_local_experts are given; transformers reads one of them");
  return level.requiredInt(local ? "num_local_experts" : "num_experts", fields == MoeFields::Qwen3Next ? 0 : 1);
}

}  // namespace

void readQwenMoe(const ConfigObject& level, MoeFields fields, TargetConfig& c) {
  if (fields == MoeFields::None) return;
  int numExperts = readNumExperts(level, fields).value_or(0);
  if (numExperts == 0) return;
  MoeConfig moe;
  moe.numExperts = numExperts;
  moe.numExpertsPerToken = level.requiredInt("num_experts_per_tok", 1).value_or(0);
  if (moe.numExpertsPerToken > numExperts)
    level.problems().add(level.pathOf("num_experts_per_tok"),
                         std::to_string(moe.numExpertsPerToken) + " exceeds num_experts " + std::to_string(numExperts));
  moe.moeIntermediateSize = level.requiredInt("moe_intermediate_size", 1).value_or(0);
  if (fields != MoeFields::Qwen3Moe)
    moe.sharedExpertIntermediateSize = level.requiredInt("shared_expert_intermediate_size", 0).value_or(0);
  if (fields == MoeFields::Qwen3_5Moe) {
    c.moe = moe;  // every layer sparse, top-k renormalised: the defaults
    return;
  }
  moe.decoderSparseStep = level.optionalInt("decoder_sparse_step", 1).value_or(1);
  moe.mlpOnlyLayers = level.optionalIntList("mlp_only_layers", 0).value_or(std::vector<int>{});
  for (int layer : moe.mlpOnlyLayers)
    if (layer >= c.numHiddenLayers)
      level.problems().add(level.pathOf("mlp_only_layers"),
                           "layer " + std::to_string(layer) + " is not below num_hidden_layers " +
                               std::to_string(c.numHiddenLayers));
  moe.normTopkProb = level.optionalBool("norm_topk_prob").value_or(fields == MoeFields::Qwen3Next);
  c.moe = moe;
}

}  // namespace dfi::modelspec::detail
