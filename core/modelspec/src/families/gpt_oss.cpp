// gpt-oss (transformers models/gpt_oss): sliding and full attention with learned sinks,
// clamped-SwiGLU experts on every layer (MXFP4 in the published checkpoints), fp32 norms.
#include "../layer_types_field.h"
#include "family_module.h"

namespace dfi::modelspec::detail {
namespace {

// GptOssConfig: layers alternate sliding (even index) and full (odd index) unless layer_types
// says otherwise; sliding_window defaults to 128, and every layer has attention sinks.
void readGptOssAttention(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes = readExplicitLayerTypes(level, c.numHiddenLayers, {LayerType::FullAttention, LayerType::SlidingAttention})
                     .value_or(std::vector<LayerType>{});
  if (c.layerTypes.empty() && !level.has("layer_types"))
    for (int i = 0; i < c.numHiddenLayers; ++i)
      c.layerTypes.push_back((i + 1) % 2 ? LayerType::SlidingAttention : LayerType::FullAttention);
  if (level.has("sliding_window")) c.slidingWindow = level.optionalInt("sliding_window", 1);
  else if (!level.json().contains("sliding_window")) c.slidingWindow = 128;
  if (c.numLayersOfType(LayerType::SlidingAttention) > 0 && !c.slidingWindow)
    level.problems().add(level.pathOf("sliding_window"), "layer_types has sliding_attention layers but sliding_window is null");
  c.attentionSinks = true;
}

// Every layer's MLP is num_local_experts experts of intermediate_size, top num_experts_per_tok
// of them per token.
void readGptOssExperts(const ConfigObject& level, TargetConfig& c) {
  MoeConfig moe;
  moe.numExperts = level.requiredInt("num_local_experts", 1).value_or(0);
  moe.numExpertsPerToken = level.optionalInt("num_experts_per_tok", 1).value_or(4);
  if (moe.numExperts > 0 && moe.numExpertsPerToken > moe.numExperts)
    level.problems().add(level.pathOf("num_experts_per_tok"), std::to_string(moe.numExpertsPerToken) +
                                                                " exceeds num_local_experts " + std::to_string(moe.numExperts));
  moe.moeIntermediateSize = c.intermediateSize;
  c.moe = moe;
  SwigluClamp clamp;
  clamp.alpha = level.optionalNumber("swiglu_alpha").value_or(clamp.alpha);
  clamp.limit = level.optionalNumber("swiglu_limit").value_or(clamp.limit);
  if (!(clamp.limit > 0))
    level.problems().add(level.pathOf("swiglu_limit"), "must be positive, found " + nlohmann::json(clamp.limit).dump());
  c.swigluClamp = clamp;
}

void readGptOssLayers(const ConfigObject& level, TargetConfig& c) {
  readGptOssAttention(level, c);
  readGptOssExperts(level, c);
}

// GptOssConfig's rope when the file gives none: YaRN x32 over 4096 positions, untruncated.
RopeConfig gptOssDefaultRope(double theta) {
  RopeConfig rope;
  rope.type = "yarn";
  rope.theta = theta;
  rope.factor = 32;
  rope.originalMaxPositionEmbeddings = 4096;
  rope.truncate = false;
  return rope;
}

}  // namespace

const FamilyModule& gptOssFamily() {
  static const FamilyModule module{
      .family = TargetFamily::GptOss,
      .name = "gpt-oss",
      // Its experts are its own kind (readGptOssExperts), not the Qwen MoE fields.
      .modelTypes = {{.modelType = "gpt_oss", .architectures = {"GptOssForCausalLM"}}},
      .traits = {.norm = NormKind::Fp32Weight, .qkNorm = false, .mlp = MlpKind::GptOssExperts, .fixedTensorLayout = false},
      .geometry = {.kvHeadsDefaultToHeads = true,
                   .headDim = 64,
                   .rmsNormEps = 1e-5,
                   .attentionBias = true,
                   .maxPositionEmbeddings = 131072},
      .readLayers = readGptOssLayers,
      .defaultTheta = 150000.0,
      .ropeWhenAbsent = gptOssDefaultRope,
      .quantizationMethods = {"mxfp4"},
  };
  return module;
}

}  // namespace dfi::modelspec::detail
