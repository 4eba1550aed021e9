#include "dfi/modelspec/drafter_config.h"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <cstdint>
#include <set>
#include <string_view>

#include "config_json.h"
#include "decoder_geometry.h"
#include "drafter_config_fields.h"
#include "layer_types_field.h"
#include "rope_field.h"

namespace dfi::modelspec {
namespace {

using detail::ConfigObject;
using detail::contains;
using detail::ProblemList;

constexpr const char* kDrafterArchitecture = "DFlashDraftModel";
constexpr const char* kDflash2Architecture = "DFlash2DraftModel";
constexpr int kDefaultBlockSize = 16;  // SGLang's default when a config names none

// The dflash_config keys dflash 0.1.0's DFlashDraftModel reads (each also at the top level).
constexpr std::string_view kDflashFields[]{"block_size", "mask_token_id", "target_layer_ids",
                                                        "input_embedding_scale", "output_multiplier",
                                                        "final_logit_softcapping", "conv_kernel_size",
                                                        "conv_group_size", "selector_rank", "selector_top_k"};
// SpecForge 0.2.0's DSparkDraftModel: dflash_config.projector_type "dspark" and its heads' keys
// (build_markov_head, _init_draft_head), known only beside that projector type.
constexpr std::string_view kSpecforgeDsparkFields[]{"projector_type",         "attention_mode",
                                                    "markov_rank",            "markov_head_type",
                                                    "enable_confidence_head", "confidence_head_alpha",
                                                    "confidence_head_with_markov"};
constexpr const char* kSpecforgeDsparkArchitecture = "DSparkDraftModel";
constexpr std::string_view kQwen3ConfigFields[]{
    "_name_or_path", "architectures", "auto_map", "model_type", "transformers_version", "dtype", "torch_dtype",
    "attention_bias", "attention_dropout", "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id",
    "decoder_start_token_id", "head_dim", "hidden_act", "hidden_size", "initializer_range", "intermediate_size",
    "layer_types", "max_position_embeddings", "max_window_layers", "num_attention_heads", "num_hidden_layers",
    "num_key_value_heads", "rms_norm_eps", "rope_parameters", "rope_scaling", "rope_theta", "partial_rotary_factor",
    "sliding_window", "use_sliding_window", "tie_word_embeddings", "use_cache", "vocab_size", "id2label", "label2id",
    "is_encoder_decoder", "chunk_size_feed_forward", "output_attentions", "output_hidden_states", "return_dict",
    "problem_type", "tokenizer_class"};
// z-lab's own top-level keys (dflash 0.1.0 reads dflash_config's also at the top level).
constexpr std::string_view kDflashTopLevel[]{
    "dflash_config", "num_target_layers", "target_hidden_size", "is_causal", "block_size", "mask_token_id",
    "target_layer_ids", "input_embedding_scale", "output_multiplier", "final_logit_softcapping", "conv_kernel_size",
    "conv_group_size", "selector_rank", "selector_top_k"};

// dflash 0.1.0's _draft_value: dflash_config's value, else the top level's.
std::optional<double> readNumberFlatOrNested(const ConfigObject& top, const std::optional<ConfigObject>& dflash,
                                             std::string_view key) {
  if (dflash && dflash->has(key)) return dflash->optionalNumber(key);
  return top.optionalNumber(key);
}

void readOutputFields(const ConfigObject& top, const std::optional<ConfigObject>& dflash, DrafterConfig& c) {
  c.inputEmbeddingScale = readNumberFlatOrNested(top, dflash, "input_embedding_scale").value_or(1.0);
  c.outputMultiplier = readNumberFlatOrNested(top, dflash, "output_multiplier").value_or(1.0);
  const std::optional<double> cap = readNumberFlatOrNested(top, dflash, "final_logit_softcapping");
  if (cap && *cap > 0) c.finalLogitSoftcapping = cap;
}

void noteUnknownFields(const ConfigObject& top, const std::optional<ConfigObject>& dflash, DrafterConfig& c) {
  for (const auto& [key, value] : top.json().items())
    if (!detail::isQwen3ConfigField(key) && !contains(kDflashTopLevel, key))
      c.warnings.push_back({key, "not a field the engine knows; ignored"});
  if (dflash)
    for (const auto& [key, value] : dflash->json().items())
      if (!contains(kDflashFields, key) && !(c.dspark && contains(kSpecforgeDsparkFields, key)))
        c.warnings.push_back({dflash->pathOf(key), "not a field the engine knows; ignored"});
}

// SpecForge's DSpark heads under dflash_config, with its defaults (no Markov head unless
// markov_rank says, the confidence head when its loss weight is positive, no Markov input).
void readSpecforgeDspark(const std::optional<ConfigObject>& dflash, DrafterConfig& c) {
  if (!dflash || dflash->optionalString("projector_type").value_or("") != "dspark") return;
  c.dspark = detail::readDsparkHeads(
      *dflash, {.markovRank = 0,
                .confidenceHead = dflash->optionalNumber("confidence_head_alpha").value_or(0) > 0,
                .confidenceWithMarkov = false,
                .rnnStepsOverAnchorRow = false});
}

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

// DFlash2's four fields, each required (dflash 0.1.0 reads them with int(_draft_value(...))).
void readDflash2Fields(const ConfigObject& top, const std::optional<ConfigObject>& dflash, DrafterConfig& c) {
  if (std::ranges::find(c.architectures, std::string(kDflash2Architecture)) == c.architectures.end()) return;
  auto required = [&](std::string_view key) {
    const std::optional<int> value = readFlatOrNested(top, dflash, key, 1);
    if (!value && !(dflash && dflash->has(key)) && !top.has(key))
      top.problems().add("dflash_config." + std::string(key), std::string("required by ") + kDflash2Architecture);
    return value.value_or(0);
  };
  Dflash2Config d{.convKernelSize = required("conv_kernel_size"),
                  .convGroupSize = required("conv_group_size"),
                  .selectorRank = required("selector_rank"),
                  .selectorTopK = required("selector_top_k")};
  if (d.convGroupSize > 0 && c.hiddenSize % d.convGroupSize != 0)
    top.problems().add("dflash_config.conv_group_size", std::to_string(d.convGroupSize) +
                                                            " does not divide hidden_size " +
                                                            std::to_string(c.hiddenSize));
  if (d.selectorTopK > c.vocabSize && c.vocabSize > 0)
    top.problems().add("dflash_config.selector_top_k", std::to_string(d.selectorTopK) + " exceeds vocab_size " +
                                                           std::to_string(c.vocabSize));
  c.dflash2 = d;
}

void checkIdentity(const ConfigObject& top, const std::optional<ConfigObject>& dflash, DrafterConfig& c) {
  c.modelType = top.optionalString("model_type").value_or("");
  if (c.modelType != "qwen3")
    top.problems().add("model_type", (c.modelType.empty() ? std::string("required field is missing")
                                                          : "unsupported model_type \"" + c.modelType + "\"") +
                                         " (supported drafter model_type: qwen3)");
  c.architectures = top.optionalStringList("architectures").value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < c.architectures.size(); ++i) {
    if (c.architectures[i] != kDrafterArchitecture && c.architectures[i] != kDflash2Architecture &&
        c.architectures[i] != kSpecforgeDsparkArchitecture)
      top.problems().add("architectures[" + std::to_string(i) + "]",
                         "unsupported drafter architecture \"" + c.architectures[i] + "\" (supported: " +
                             kDrafterArchitecture + ", " + kDflash2Architecture + ", " +
                             kSpecforgeDsparkArchitecture + ")");
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
  if (!ids && !(dflash && dflash->has("target_layer_ids"))) ids = top.optionalIntList("target_layer_ids", 0);
  if (ids) {
    c.targetLayerIds = *ids;
    c.targetLayerIdsFromConfig = true;
  } else if (!(dflash && dflash->has("target_layer_ids")) && !top.has("target_layer_ids")) {
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

}  // namespace

namespace detail {

bool isQwen3ConfigField(std::string_view key) { return contains(kQwen3ConfigFields, key); }

DsparkConfig readDsparkHeads(const ConfigObject& level, DsparkConfig d) {
  d.markovRank = level.optionalInt("markov_rank", 0).value_or(d.markovRank);
  const std::string type = level.optionalString("markov_head_type").value_or("vanilla");
  if (type == "gated")
    d.markovHeadType = MarkovHeadType::Gated;
  else if (type == "rnn")
    d.markovHeadType = MarkovHeadType::Rnn;
  else if (type != "vanilla")
    level.problems().add(level.pathOf("markov_head_type"), "\"" + type + "\" is not one of vanilla, gated, rnn");
  d.confidenceHead = level.optionalBool("enable_confidence_head").value_or(d.confidenceHead);
  d.confidenceWithMarkov = level.optionalBool("confidence_head_with_markov").value_or(d.confidenceWithMarkov);
  if (d.confidenceHead && d.confidenceWithMarkov && d.markovRank == 0)
    level.problems().add(level.pathOf("confidence_head_with_markov"), "true needs a Markov head, but markov_rank is 0");
  return d;
}

void readDrafterAttentionKinds(const ConfigObject& top, std::string_view reference, DrafterConfig& c) {
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
    top.problems().add(top.pathOf("sliding_window"), "layer_types has sliding_attention layers but sliding_window is absent");
  // Qwen3Config keeps sliding_window only with use_sliding_window, so a package building its
  // layers from it runs them unwindowed; vLLM and SGLang window them, as the engine does.
  if (anySliding && c.slidingWindow && !useSliding)
    c.warnings.push_back({top.pathOf("use_sliding_window"),
                          "false or absent: " + std::string(reference) +
                              " (through Qwen3Config) runs the sliding layers without a window; the engine "
                              "windows them by sliding_window " +
                              std::to_string(*c.slidingWindow) + ", as vLLM and SGLang do"});
}

}  // namespace detail

std::string_view markovHeadTypeName(MarkovHeadType type) {
  switch (type) {
    case MarkovHeadType::Vanilla: return "vanilla";
    case MarkovHeadType::Gated: return "gated";
    case MarkovHeadType::Rnn: return "rnn";
  }
  return "vanilla";
}

std::string_view drafterFormatName(DrafterFormat format) {
  return format == DrafterFormat::Speculators ? "speculators" : "z-lab";
}

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
  if (top.has("speculators_model_type")) {
    detail::readSpeculatorsDrafter(top, targetNumLayers, c);
    problems.throwIfAny(origin);
    return c;
  }
  checkIdentity(top, dflash, c);
  static_cast<DecoderGeometry&>(c) = detail::readDecoderGeometry(top, {.kvHeadsDefaultToHeads = true});

  c.blockSize = readFlatOrNested(top, dflash, "block_size", 2).value_or(kDefaultBlockSize);
  c.maskTokenId = readFlatOrNested(top, dflash, "mask_token_id", 0);
  readTaps(top, dflash, targetNumLayers, c);
  detail::readDrafterAttentionKinds(top, "dflash 0.1.0", c);
  c.isCausal = top.optionalBool("is_causal");
  c.rope = detail::readRope(top, {.layerTypes = c.layerTypes,
                                  .maxPositionEmbeddings = c.maxPositionEmbeddings,
                                  .headDim = c.headDim});
  c.targetHiddenSize = top.optionalInt("target_hidden_size", 1);
  readOutputFields(top, dflash, c);
  readDflash2Fields(top, dflash, c);
  readSpecforgeDspark(dflash, c);
  noteUnknownFields(top, dflash, c);
  problems.throwIfAny(origin);
  return c;
}

DrafterConfig parseDrafterConfig(const std::filesystem::path& configJson, std::optional<int> targetNumLayers) {
  return parseDrafterConfigText(detail::readConfigFile(configJson), configJson.string(), targetNumLayers);
}

}  // namespace dfi::modelspec
