#include "dfi/tensorfile/drafter_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "config_json.h"
#include "decoder_geometry.h"
#include "layer_types_field.h"
#include "rope_field.h"

namespace dfi::tensorfile {
namespace {

using detail::ConfigObject;
using detail::ProblemList;

constexpr const char* kDrafterArchitecture = "DFlashDraftModel";
constexpr int kDefaultBlockSize = 16;  // SGLang's default when a config names none

// A value some writers put at the top level and newer ones under dflash_config: read both,
// and when both are there they must agree.
std::optional<int> readFlatOrNested(const ConfigObject& top, const std::optional<ConfigObject>& dflash,
                                    std::string_view key, int minValue) {
  std::optional<int> flat = top.optionalInt(key, minValue);
  std::optional<int> nested = dflash ? dflash->optionalInt(key, minValue) : std::nullopt;
  if (flat && nested && *flat != *nested) {
    top.problems().add(dflash->pathOf(key), std::to_string(*nested) + " disagrees with top-level " +
                                                std::string(key) + " " + std::to_string(*flat));
  }
  return nested ? nested : flat;
}

void checkIdentity(const ConfigObject& top, const std::optional<ConfigObject>& dflash, DrafterConfig& c) {
  c.modelType = top.optionalString("model_type").value_or("");
  if (c.modelType != "qwen3")
    top.problems().add("model_type", (c.modelType.empty() ? std::string("required field is missing")
                                                          : "unsupported model_type \"" + c.modelType + "\"") +
                                         " (supported drafter model_type: qwen3)");
  c.architectures = top.optionalStringList("architectures").value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < c.architectures.size(); ++i) {
    if (c.architectures[i] != kDrafterArchitecture)
      top.problems().add("architectures[" + std::to_string(i) + "]",
                         "unsupported drafter architecture \"" + c.architectures[i] + "\" (supported: " +
                             kDrafterArchitecture + ")");
  }
  if (c.architectures.empty() && !dflash && !top.has("block_size"))
    top.problems().add("architectures", std::string("not a DFlash drafter config: no ") + kDrafterArchitecture +
                                            " architecture, no dflash_config, no block_size");
}

void readTaps(const ConfigObject& top, const std::optional<ConfigObject>& dflash,
              std::optional<int> targetNumLayers, DrafterConfig& c) {
  std::optional<int> fileTargetLayers = top.optionalInt("num_target_layers", 1, detail::kMaxLayers);
  c.numTargetLayers = fileTargetLayers.value_or(targetNumLayers.value_or(0));
  std::optional<std::vector<int>> ids = dflash ? dflash->optionalIntList("target_layer_ids", 0) : std::nullopt;
  if (ids) {
    c.targetLayerIds = *ids;
    c.targetLayerIdsFromConfig = true;
  } else if (!(dflash && dflash->has("target_layer_ids"))) {
    if (c.numTargetLayers == 0) {
      top.problems().add("dflash_config.target_layer_ids",
                         "absent, and the target depth for the default rule is unknown "
                         "(no num_target_layers, no target given)");
      return;
    }
    c.targetLayerIds = defaultTargetLayerIds(c.numTargetLayers, c.numHiddenLayers);
  }
  const std::string field = c.targetLayerIdsFromConfig ? "dflash_config.target_layer_ids" : "num_target_layers";
  if (c.targetLayerIds.empty() && c.targetLayerIdsFromConfig)
    top.problems().add(field, "must name at least one target layer");
  std::set<int> seen;
  for (int id : c.targetLayerIds) {
    if (id < 0 || (c.numTargetLayers > 0 && id >= c.numTargetLayers))
      top.problems().add(field, "target layer " + std::to_string(id) + " is outside [0, " +
                                    std::to_string(c.numTargetLayers) + ")");
    if (!seen.insert(id).second) top.problems().add(field, "target layer " + std::to_string(id) + " is listed twice");
  }
}

void readAttentionKinds(const ConfigObject& top, DrafterConfig& c) {
  // Engines window sliding layers by sliding_window whatever use_sliding_window says; the
  // default layer rule follows Qwen3Config, where the flag gates the window.
  c.slidingWindow = top.optionalInt("sliding_window", 1);
  bool useSliding = top.optionalBool("use_sliding_window").value_or(false);
  int maxWindowLayers = top.optionalInt("max_window_layers", 0).value_or(28);
  c.layerTypes = detail::readExplicitLayerTypes(top, c.numHiddenLayers,
                                                {LayerType::FullAttention, LayerType::SlidingAttention})
                     .value_or(detail::qwen3LayerTypes(c.numHiddenLayers, useSliding ? c.slidingWindow : std::nullopt,
                                                       maxWindowLayers));
  bool anySliding = std::count(c.layerTypes.begin(), c.layerTypes.end(), LayerType::SlidingAttention) > 0;
  if (anySliding && !c.slidingWindow)
    top.problems().add("sliding_window", "layer_types has sliding_attention layers but sliding_window is absent");
  c.isCausal = top.optionalBool("is_causal");
}

}  // namespace

std::vector<int> defaultTargetLayerIds(int numTargetLayers, int numDraftLayers) {
  if (numDraftLayers <= 0) return {};
  if (numDraftLayers == 1) return {numTargetLayers / 2};
  const int start = 1;
  const std::int64_t span = (std::int64_t{numTargetLayers} - 3) - start;
  std::vector<int> ids;
  for (int i = 0; i < numDraftLayers; ++i) {
    // Same double operations as Python's start + (i * span) / (n - 1); nearbyint in the
    // default rounding mode rounds half to even, like Python's round().
    double position = start + static_cast<double>(i * span) / (numDraftLayers - 1);
    ids.push_back(static_cast<int>(std::nearbyint(position)));
  }
  return ids;
}

DrafterConfig parseDrafterConfigText(std::string_view jsonText, const std::string& origin,
                                     std::optional<int> targetNumLayers) {
  const nlohmann::json root = detail::parseConfigJson(jsonText, origin);
  ProblemList problems;
  ConfigObject top(root, "", problems);
  std::optional<ConfigObject> dflash = top.optionalObject("dflash_config");

  DrafterConfig c;
  c.rawJson = std::string(jsonText);
  checkIdentity(top, dflash, c);
  detail::DecoderGeometry g = detail::readDecoderGeometry(top, {.kvHeadsDefaultToHeads = true});
  c.hiddenSize = g.hiddenSize;
  c.numHiddenLayers = g.numHiddenLayers;
  c.numAttentionHeads = g.numAttentionHeads;
  c.numKeyValueHeads = g.numKeyValueHeads;
  c.headDim = g.headDim;
  c.intermediateSize = g.intermediateSize;
  c.vocabSize = g.vocabSize;
  c.rmsNormEps = g.rmsNormEps;
  c.attentionBias = g.attentionBias;
  c.maxPositionEmbeddings = g.maxPositionEmbeddings;

  c.blockSize = readFlatOrNested(top, dflash, "block_size", 2).value_or(kDefaultBlockSize);
  c.maskTokenId = readFlatOrNested(top, dflash, "mask_token_id", 0);
  readTaps(top, dflash, targetNumLayers, c);
  readAttentionKinds(top, c);
  c.rope = detail::readRope(top, {.layerTypes = c.layerTypes,
                                  .maxPositionEmbeddings = c.maxPositionEmbeddings,
                                  .headDim = c.headDim});
  c.targetHiddenSize = top.optionalInt("target_hidden_size", 1);
  problems.throwIfAny(origin);
  return c;
}

DrafterConfig parseDrafterConfig(const std::filesystem::path& configJson, std::optional<int> targetNumLayers) {
  return parseDrafterConfigText(detail::readConfigFile(configJson), configJson.string(), targetNumLayers);
}

}  // namespace dfi::tensorfile
