// vLLM speculators' DFlash and DFlash2 configs (speculators 0.9.0, DFlashSpeculatorConfig and
// DFlash2SpeculatorConfig, whose four convolution and selector fields sit at the top level) read into the
// engine's DrafterConfig: the decoder layer's Qwen3Config nested as transformer_layer_config, the
// DFlash fields at the top level, and speculators_config naming the proposal method and the
// verifier. The conventions that differ from z-lab's are translated here, once:
//  - aux_hidden_state_layer_ids index the target's hidden states with 0 for the embedding output
//    (speculators' converter writes z-lab's target_layer_ids + 1), so tap = id - 1;
//  - full layers are non-causal, sliding ones causal unless sliding_window_non_causal;
//  - block_size defaults to 8 and draft_vocab_size to 32000 (the config class's defaults).

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "config_json.h"
#include "decoder_geometry.h"
#include "drafter_config_fields.h"
#include "rope_field.h"

namespace dfi::modelspec::detail {
namespace {

constexpr int kDefaultBlockSize = 8;          // DFlashSpeculatorConfig.block_size
constexpr int kDefaultDraftVocabSize = 32000;  // DFlashSpeculatorConfig.draft_vocab_size
// speculators 0.9.0's DFlash-family model types.
constexpr std::string_view kFamilyTypes[]{"dflash", "dflash2", "dspark"};
constexpr std::string_view kDflash2 = "dflash2";
constexpr std::string_view kDspark = "dspark";
// DFlash2SpeculatorConfig's fields and defaults (z-lab's DFlash2 layers under the same names).
constexpr std::pair<std::string_view, int> kDflash2Fields[]{
    {"conv_kernel_size", 2}, {"conv_group_size", 16}, {"selector_rank", 256}, {"selector_top_k", 16}};

constexpr std::string_view kTopLevel[]{
    "speculators_model_type", "speculators_version", "speculators_config", "architectures", "auto_map",
    "transformer_layer_config", "draft_vocab_size", "block_size", "target_hidden_size",
    "aux_hidden_state_layer_ids", "mask_token_id", "sliding_window_non_causal", "sample_from_anchor",
    "dtype", "torch_dtype", "transformers_version", "tie_word_embeddings", "_name_or_path", "conv_kernel_size",
    "conv_group_size", "selector_rank", "selector_top_k"};
// DSparkSpeculatorConfig's own fields: known on a dspark drafter only (elsewhere nothing reads them).
constexpr std::string_view kDsparkFields[]{"markov_rank", "markov_head_type", "enable_confidence_head",
                                           "confidence_head_with_markov"};

void checkModelType(const ConfigObject& top, DrafterConfig& c) {
  const std::string type = top.optionalString("speculators_model_type").value_or("");
  c.speculators->modelType = type;
  if (contains(kFamilyTypes, type)) return;
  top.problems().add("speculators_model_type",
                     "\"" + type + "\" is not a speculators DFlash-family type (dflash, dflash2, dspark)");
}

// DFlash2's convolutions and candidate selector, checked as the package's constructors check
// them; its selector scores the verifier's vocabulary, so the package refuses a reduced one.
void readDflash2(const ConfigObject& top, DrafterConfig& c) {
  auto field = [&](std::size_t i) {
    return top.optionalInt(kDflash2Fields[i].first, 1).value_or(kDflash2Fields[i].second);
  };
  const Dflash2Config d{.convKernelSize = field(0),
                        .convGroupSize = field(1),
                        .selectorRank = field(2),
                        .selectorTopK = field(3)};
  if (c.hiddenSize > 0 && c.hiddenSize % d.convGroupSize != 0)
    top.problems().add("conv_group_size", std::to_string(d.convGroupSize) + " does not divide hidden_size " +
                                              std::to_string(c.hiddenSize));
  if (d.convKernelSize > c.blockSize)
    top.problems().add("conv_kernel_size", std::to_string(d.convKernelSize) + " exceeds block_size " +
                                               std::to_string(c.blockSize));
  if (c.vocabSize > 0 && d.selectorTopK > c.vocabSize)
    top.problems().add("selector_top_k", std::to_string(d.selectorTopK) + " exceeds the verifier vocabulary " +
                                             std::to_string(c.vocabSize));
  if (c.draftVocabSize)
    top.problems().add("draft_vocab_size", std::to_string(*c.draftVocabSize) +
                                               ": speculators' DFlash2 requires the full verifier vocabulary (" +
                                               std::to_string(c.vocabSize) + ")");
  c.dflash2 = d;
}

// The decoder layer: speculators builds Qwen3DFlashDecoderLayer from this config whatever its
// model_type, so only Qwen3's fields are meaningful.
void readTransformerLayer(const ConfigObject& top, DrafterConfig& c) {
  const std::optional<ConfigObject> layer = top.optionalObject("transformer_layer_config");
  if (!layer) {
    if (!top.has("transformer_layer_config"))
      top.problems().add("transformer_layer_config", "required field is missing (the drafter's decoder layers)");
    return;
  }
  c.modelType = layer->optionalString("model_type").value_or("qwen3");
  if (c.modelType != "qwen3")
    layer->problems().add(layer->pathOf("model_type"),
                          "unsupported model_type \"" + c.modelType + "\" (speculators' DFlash layers are Qwen3's)");
  static_cast<DecoderGeometry&>(c) = readDecoderGeometry(*layer, {.kvHeadsDefaultToHeads = true});
  readDrafterAttentionKinds(*layer, "speculators 0.9.0", c);
  c.rope = readRope(*layer, {.layerTypes = c.layerTypes,
                             .maxPositionEmbeddings = c.maxPositionEmbeddings,
                             .headDim = c.headDim});
  for (const auto& [key, value] : layer->json().items())
    if (!isQwen3ConfigField(key)) c.warnings.push_back({layer->pathOf(key), "not a field the engine knows; ignored"});
}

void readTaps(const ConfigObject& top, std::optional<int> targetNumLayers, DrafterConfig& c) {
  c.numTargetLayers = targetNumLayers.value_or(0);
  const std::optional<std::vector<int>> ids = top.optionalIntList("aux_hidden_state_layer_ids", 0);
  if (!ids) {
    if (!top.has("aux_hidden_state_layer_ids"))
      top.problems().add("aux_hidden_state_layer_ids", "required field is missing (the target layers the drafter reads)");
    return;
  }
  c.speculators->auxHiddenStateLayerIds = *ids;
  c.targetLayerIdsFromConfig = true;
  if (ids->empty()) top.problems().add("aux_hidden_state_layer_ids", "must name at least one target layer");
  std::set<int> seen;
  for (int id : *ids) {
    if (id == 0)
      top.problems().add("aux_hidden_state_layer_ids",
                         "0 is the embedding output (hidden_states[0]); the engine taps decoder layer outputs");
    else if (c.numTargetLayers > 0 && id > c.numTargetLayers)
      top.problems().add("aux_hidden_state_layer_ids", std::to_string(id) + " is outside [1, " +
                                                           std::to_string(c.numTargetLayers) +
                                                           "] (hidden_states of a target with " +
                                                           std::to_string(c.numTargetLayers) + " layers)");
    if (!seen.insert(id).second)
      top.problems().add("aux_hidden_state_layer_ids", std::to_string(id) + " is listed twice");
    c.targetLayerIds.push_back(id - 1);
  }
}

void readVocabulary(const ConfigObject& top, DrafterConfig& c) {
  const int draftVocab = top.optionalInt("draft_vocab_size", 1).value_or(kDefaultDraftVocabSize);
  if (c.vocabSize > 0 && draftVocab > c.vocabSize)
    top.problems().add("draft_vocab_size", std::to_string(draftVocab) + " exceeds the target vocabulary (" +
                                               "transformer_layer_config.vocab_size " + std::to_string(c.vocabSize) +
                                               ")");
  else if (draftVocab < c.vocabSize)
    c.draftVocabSize = draftVocab;
}

void readProposal(const ConfigObject& top, SpeculatorsFields& s) {
  const std::optional<ConfigObject> config = top.optionalObject("speculators_config");
  if (!config) return;
  if (const std::optional<ConfigObject> verifier = config->optionalObject("verifier")) {
    s.verifierNameOrPath = verifier->optionalString("name_or_path").value_or("");
    s.verifierArchitectures = verifier->optionalStringList("architectures").value_or(std::vector<std::string>{});
  }
  const std::string wanted = config->optionalString("default_proposal_method").value_or("");
  const nlohmann::json* methods = config->json().contains("proposal_methods") ? &config->json()["proposal_methods"] : nullptr;
  if (!methods || !methods->is_array()) return;
  for (std::size_t i = 0; i < methods->size(); ++i) {
    const nlohmann::json& method = (*methods)[i];
    if (!method.is_object()) continue;
    const ConfigObject fields(method, config->pathOf("proposal_methods") + "[" + std::to_string(i) + "]", top.problems());
    const std::string type = fields.optionalString("proposal_type").value_or("");
    if (!wanted.empty() && type != wanted) continue;
    s.proposalType = type;
    s.speculativeTokens = fields.optionalInt("speculative_tokens", 1);
    s.verifierAcceptK = fields.optionalInt("verifier_accept_k", 1);
    s.acceptTolerance = fields.optionalNumber("accept_tolerance");
    return;
  }
}

}  // namespace

void readSpeculatorsDrafter(const ConfigObject& top, std::optional<int> targetNumLayers, DrafterConfig& c) {
  c.format = DrafterFormat::Speculators;
  c.speculators.emplace();
  SpeculatorsFields& s = *c.speculators;
  checkModelType(top, c);
  s.version = top.optionalString("speculators_version").value_or("");
  c.architectures = top.optionalStringList("architectures").value_or(std::vector<std::string>{});
  readTransformerLayer(top, c);
  c.blockSize = top.optionalInt("block_size", 2).value_or(kDefaultBlockSize);
  c.maskTokenId = top.optionalInt("mask_token_id", 0);
  readTaps(top, targetNumLayers, c);
  c.targetHiddenSize = top.optionalInt("target_hidden_size", 1);
  readVocabulary(top, c);
  // Full layers always see the whole block; sliding ones causally unless told otherwise, which
  // is the engine's rule with is_causal absent (DrafterConfig::isCausal). DFlash2's config class
  // turns the non-causal window on by default.
  const bool dflash2 = s.modelType == kDflash2, dspark = s.modelType == kDspark;
  s.slidingWindowNonCausal = top.optionalBool("sliding_window_non_causal").value_or(dflash2);
  if (s.slidingWindowNonCausal) c.isCausal = false;
  // DSpark's config class samples from the anchor by default, DFlash's does not.
  c.sampleFromAnchor = top.optionalBool("sample_from_anchor").value_or(dspark);
  if (dflash2 && c.sampleFromAnchor)
    top.problems().add("sample_from_anchor",
                       "true on a DFlash2 drafter: its selector chains slots 1..B-1 from the anchor, and the engine "
                       "does not run it from the anchor's slot");
  if (dflash2) readDflash2(top, c);
  if (dspark) c.dspark = readDsparkHeads(top, DsparkConfig{});  // DSparkSpeculatorConfig's defaults
  readProposal(top, s);
  if (s.speculativeTokens && *s.speculativeTokens != c.draftsPerBlock())
    c.warnings.push_back({"speculators_config.proposal_methods",
                          "speculative_tokens " + std::to_string(*s.speculativeTokens) + " is not the " +
                              std::to_string(c.draftsPerBlock()) + " drafts a block of " +
                              std::to_string(c.blockSize) + " makes" +
                              (c.sampleFromAnchor ? " from the anchor" : "") + ": the engine drafts " +
                              std::to_string(c.draftsPerBlock())});
  for (const auto& [key, value] : top.json().items())
    if (!contains(kTopLevel, key) && !(dspark && contains(kDsparkFields, key)))
      c.warnings.push_back({key, "not a field the engine knows; ignored"});
}

}  // namespace dfi::modelspec::detail
