// GLM-5 (transformers models/glm_moe_dsa): DeepSeek-V3's multi-head latent attention (always with
// the q LoRA and interleaved rope) restricted by DeepSeek sparse attention's indexer
// (SparseAttentionIndexer), with "shared" layers that reuse the previous full layer's choice;
// dense MLPs on the layers mlp_layer_types calls "dense" (the first first_k_dense_replace by
// default), routed SwiGLU experts behind the group-limited sigmoid router with ungated shared
// experts on the others.
#include <algorithm>
#include <string>
#include <vector>

#include "deepseek_moe_fields.h"
#include "latent_attention_fields.h"

namespace dfi::modelspec::detail {
namespace {

// GlmMoeDsaConfig.__post_init__: indexer_types as written; else index_topk_pattern ("FSS..." or a
// list); else every index_topk_freq-th layer from index_skip_topk_offset - 1 runs its indexer.
std::vector<bool> readIndexerTypes(const ConfigObject& level, int layers) {
  std::vector<std::string> names;
  std::string key = "indexer_types";
  if (auto listed = level.optionalStringList("indexer_types")) {
    names = *listed;
  } else if (auto pattern = level.optionalString("index_topk_pattern")) {
    key = "index_topk_pattern";
    for (char letter : *pattern) names.push_back(letter == 'F' ? "full" : letter == 'S' ? "shared" : std::string(1, letter));
  } else if (auto patternList = level.optionalStringList("index_topk_pattern")) {
    key = "index_topk_pattern";
    names = *patternList;
  } else {
    const int freq = std::max(level.optionalInt("index_topk_freq", 0).value_or(1), 1);
    const int offset = level.optionalInt("index_skip_topk_offset", 0).value_or(2);
    for (int i = 0; i < layers; ++i) names.push_back(std::max(i - offset + 1, 0) % freq == 0 ? "full" : "shared");
  }
  std::vector<bool> own;
  if (static_cast<int>(names.size()) != layers) {
    level.problems().add(level.pathOf(key), std::to_string(names.size()) + " entries for " + std::to_string(layers) +
                                                " layers");
    return own;
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "full" && names[i] != "shared")
      level.problems().add(level.pathOf(key) + "[" + std::to_string(i) + "]",
                           "\"" + names[i] + "\" is neither \"full\" nor \"shared\"");
    own.push_back(names[i] == "full");
  }
  if (!own.empty() && !own.front())
    level.problems().add(level.pathOf(key) + "[0]", "the first layer is \"shared\": no earlier layer chooses its keys");
  return own;
}

void readGlmMoeDsaLayers(const ConfigObject& level, TargetConfig& c) {
  // layer_types, as transformers saves it, says "indexed_attention" for every layer: full
  // attention restricted by the indexer (c.sparseIndexer).
  c.layerTypes.assign(c.numHiddenLayers, LayerType::FullAttention);
  if (auto types = level.optionalStringList("layer_types"))
    for (std::size_t i = 0; i < types->size(); ++i)
      if ((*types)[i] != "indexed_attention")
        level.problems().add(level.pathOf("layer_types") + "[" + std::to_string(i) + "]",
                             "\"" + (*types)[i] + "\": every GLM-5 layer is \"indexed_attention\"");
  // GlmMoeDsaConfig's defaults; its attention always has the q LoRA and interleaved rope.
  readLatentAttention(level, c,
                      {.shape = {.qLoraRank = 2048, .kvLoraRank = 512, .qkNopeHeadDim = 192, .qkRopeHeadDim = 64,
                                 .vHeadDim = 256, .ropeInterleave = true}});
  readDeepseekMoe(level, c,
                  {.numExperts = 256,
                   .numExpertsPerToken = 8,
                   .numSharedExperts = 1,
                   .numGroups = 1,
                   .topkGroups = 1,
                   .routedScalingFactor = 2.5,
                   .firstDenseLayers = 3});
  // mlp_layer_types, when written, says which layers are dense instead of first_k_dense_replace.
  if (auto types = level.optionalStringList("mlp_layer_types")) {
    if (static_cast<int>(types->size()) != c.numHiddenLayers)
      level.problems().add(level.pathOf("mlp_layer_types"), std::to_string(types->size()) + " entries for " +
                                                                std::to_string(c.numHiddenLayers) + " layers");
    c.moe->mlpOnlyLayers.clear();
    for (std::size_t i = 0; i < types->size(); ++i) {
      if ((*types)[i] == "dense")
        c.moe->mlpOnlyLayers.push_back(static_cast<int>(i));
      else if ((*types)[i] != "sparse")
        level.problems().add(level.pathOf("mlp_layer_types") + "[" + std::to_string(i) + "]",
                             "\"" + (*types)[i] + "\" is neither \"dense\" nor \"sparse\"");
    }
  }
  SparseAttentionIndexer indexer;
  indexer.numHeads = level.optionalInt("index_n_heads", 1).value_or(32);
  indexer.headDim = level.optionalInt("index_head_dim", 1, kMaxHeadDim).value_or(128);
  indexer.topk = level.optionalInt("index_topk", 1).value_or(2048);
  indexer.ownIndexer = readIndexerTypes(level, c.numHiddenLayers);
  if (c.latentAttention && indexer.headDim < c.latentAttention->qkRopeHeadDim)
    level.problems().add(level.pathOf("index_head_dim"),
                         std::to_string(indexer.headDim) + " is below qk_rope_head_dim " +
                             std::to_string(c.latentAttention->qkRopeHeadDim) + ", the rotated part of its keys");
  c.sparseIndexer = indexer;
}

}  // namespace

const FamilyModule& glmMoeDsaFamily() {
  static const FamilyModule module{
      .family = TargetFamily::GlmMoeDsa,
      .name = "GLM-5",
      .modelTypes = {{.modelType = "glm_moe_dsa", .architectures = {"GlmMoeDsaForCausalLM"}}},
      .traits = {.norm = NormKind::Plain, .qkNorm = false, .fixedTensorLayout = false},
      // num_key_value_heads: the class default is 64, its num_attention_heads' default; the latent
      // attention does not group keys.
      .geometry = {.kvHeadsDefaultToHeads = true, .headDimFromHeads = true, .rmsNormEps = 1e-5,
                   .maxPositionEmbeddings = 202752},
      .readLayers = readGlmMoeDsaLayers,
  };
  return module;
}

}  // namespace dfi::modelspec::detail
