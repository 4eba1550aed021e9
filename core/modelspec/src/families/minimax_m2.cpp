// MiniMax-M2 (transformers models/minimax_m2): full attention with one q/k RMSNorm over all
// heads, partial rotary (the published files give it as rotary_dim), and routed SwiGLU experts
// on every layer behind a sigmoid router with a score-correction bias.
#include "family_module.h"

namespace dfi::modelspec::detail {
namespace {

// Every layer's MLP is num_local_experts experts of intermediate_size, the top
// num_experts_per_tok of sigmoid(logits) + e_score_correction_bias per token, weighted by their
// unbiased scores renormalised to sum one (MiniMaxM2TopKRouter). No groups, no scaling.
void readMiniMaxM2Experts(const ConfigObject& level, TargetConfig& c) {
  MoeConfig moe;
  moe.numExperts = level.requiredInt("num_local_experts", 1).value_or(0);
  moe.numExpertsPerToken = level.optionalInt("num_experts_per_tok", 1).value_or(8);
  if (moe.numExperts > 0 && moe.numExpertsPerToken > moe.numExperts)
    level.problems().add(level.pathOf("num_experts_per_tok"), std::to_string(moe.numExpertsPerToken) +
                                                                " exceeds num_local_experts " + std::to_string(moe.numExperts));
  moe.moeIntermediateSize = c.intermediateSize;
  moe.normTopkProb = true;
  moe.scoring = RouterScoring::Sigmoid;
  c.moe = moe;
}

void readMiniMaxM2Layers(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes.assign(c.numHiddenLayers, LayerType::FullAttention);  // no sliding window, unlike MiniMax-01
  readMiniMaxM2Experts(level, c);
}

// MiniMaxM2Config.convert_rope_params_to_dict: the released files' rotary_dim is
// partial_rotary_factor = rotary_dim / head_dim.
std::optional<double> rotaryDimAsPartialFactor(const ConfigObject& level, const TargetConfig& c) {
  const std::optional<int> rotaryDim = level.optionalInt("rotary_dim", 1);
  if (!rotaryDim || c.headDim <= 0) return std::nullopt;
  return static_cast<double>(*rotaryDim) / c.headDim;
}

}  // namespace

const FamilyModule& miniMaxM2Family() {
  static const FamilyModule module{
      .family = TargetFamily::MiniMaxM2,
      .name = "MiniMax-M2",
      // Its experts are read by readMiniMaxM2Experts, not the Qwen MoE fields.
      .modelTypes = {{.modelType = "minimax_m2", .architectures = {"MiniMaxM2ForCausalLM"}}},
      .traits = {.norm = NormKind::Plain, .qkNorm = true, .qkNormAcrossHeads = true, .fixedTensorLayout = false},
      .geometry = {.headDim = 128, .rmsNormEps = 1e-6, .maxPositionEmbeddings = 196608},
      .readLayers = readMiniMaxM2Layers,
      .defaultTheta = 5000000.0,
      .partialRotaryFactorField = rotaryDimAsPartialFactor,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
