// DeepSeek-V3 (transformers models/deepseek_v3) and the models built on it: Kimi K2 (its files'
// model_type "kimi_k2", architecture DeepseekV3ForCausalLM) and the text model of Kimi K2.5
// (kimi_k25's text_config, which transformers reads as deepseek_v3). Multi-head latent attention
// on every layer (LatentAttention; YaRN with DeepSeek's mscale), dense MLPs on the first
// first_k_dense_replace layers, then routed SwiGLU experts behind the group-limited sigmoid
// router with ungated shared experts. The multi-token-prediction layers stored after the last
// decoder layer (num_nextn_predict_layers) are not part of the model transformers builds.
#include "deepseek_moe_fields.h"
#include "latent_attention_fields.h"

namespace dfi::modelspec::detail {
namespace {

void readDeepseekV3Layers(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes.assign(c.numHiddenLayers, LayerType::FullAttention);
  // DeepseekV3Config's defaults; q_lora_rank null is a full-rank q_proj.
  readLatentAttention(level, c,
                      {.shape = {.qLoraRank = 1536, .kvLoraRank = 512, .qkNopeHeadDim = 128, .qkRopeHeadDim = 64,
                                 .vHeadDim = 128, .ropeInterleave = true},
                       .fullRankQuery = true,
                       .ropeInterleaveField = true});
  // DeepseekV3Config's defaults.
  readDeepseekMoe(level, c,
                  {.numExperts = 256,
                   .numExpertsPerToken = 8,
                   .numSharedExperts = 1,
                   .numGroups = 8,
                   .topkGroups = 4,
                   .routedScalingFactor = 2.5,
                   .firstDenseLayers = 3});
}

}  // namespace

const FamilyModule& deepseekV3Family() {
  static const FamilyModule module{
      .family = TargetFamily::DeepseekV3,
      .name = "DeepSeek-V3",
      .modelTypes = {{.modelType = "deepseek_v3", .architectures = {"DeepseekV3ForCausalLM"}},
                     {.modelType = "kimi_k2", .architectures = {"DeepseekV3ForCausalLM"}},
                     {.modelType = "kimi_k25",
                      .nestedTextConfig = true,
                      .textModelTypes = {"deepseek_v3", "kimi_k2"},
                      .architectures = {"Kimi_K25ForConditionalGeneration",
                                        "KimiK25ForConditionalGeneration"}}},
      // The attention is LatentAttention's; attention_bias covers q_a_proj, kv_a_proj_with_mqa and
      // o_proj.
      .traits = {.norm = NormKind::Plain, .qkNorm = false, .fixedTensorLayout = false},
      .geometry = {.kvHeadsDefaultToHeads = true,
                   .headDimFromHeads = true,
                   .rmsNormEps = 1e-6,
                   .maxPositionEmbeddings = 4096},
      .readLayers = readDeepseekV3Layers,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
