#include "info_report.h"

#include <algorithm>
#include <optional>
#include <string>
#include <variant>

#include "dfi/base/error.h"
#include "dfi/engine/memory_plan.h"
#include "dfi/modelspec/compatibility.h"
#include "dfi/modelspec/config_error.h"
#include "dfi/modelspec/config_kind.h"
#include "dfi/modelspec/weight_layout.h"
#include "dfi/modelspec/weights_summary.h"

namespace dfi::eval {
namespace {

namespace fs = std::filesystem;
using namespace dfi::tensorfile;
using namespace dfi::modelspec;
using nlohmann::json;

fs::path modelDirOf(const fs::path& dirOrConfig) {
  return fs::is_directory(dirOrConfig) ? dirOrConfig : dirOrConfig.parent_path();
}

json ropeJson(const RopeConfig& rope, int headDim) {
  json j = {{"type", rope.type},
            {"theta", rope.theta},
            {"partial_rotary_factor", rope.partialRotaryFactor},
            {"rotary_dim", rope.rotaryDim(headDim)}};
  if (rope.type == "yarn" || rope.type == "llama3") {
    j["factor"] = rope.factor;
    j["original_max_position_embeddings"] = rope.originalMaxPositionEmbeddings;
    j["attention_scaling"] = ropeAttentionScaling(rope);
  }
  if (rope.type == "llama3") {
    j["low_freq_factor"] = rope.lowFreqFactor;
    j["high_freq_factor"] = rope.highFreqFactor;
  }
  if (!rope.mropeSection.empty()) j["mrope_section"] = rope.mropeSection;
  return j;
}

json layerTypesJson(const std::vector<LayerType>& types) {
  json counts = json::object();
  for (LayerType t : types) counts[std::string(layerTypeName(t))] = counts.value(std::string(layerTypeName(t)), 0) + 1;
  json names = json::array();
  for (LayerType t : types) names.push_back(layerTypeName(t));
  return {{"counts", counts}, {"per_layer", names}};
}

// The shared decoder geometry, by its field table: config.json's own keys.
json geometryJson(const DecoderGeometry& g) {
  json j = json::object();
  for (const GeometryField& field : kGeometryFields)
    std::visit([&](auto member) { j[std::string(field.key)] = g.*member; }, field.member);
  return j;
}

json targetJson(const TargetConfig& c) {
  json j = geometryJson(c);
  j.update({{"family", targetFamilyName(c.family)},
            {"model_type", c.modelType},
            {"architectures", c.architectures},
            {"tie_word_embeddings", c.tieWordEmbeddings},
            {"rope", ropeJson(c.rope, c.headDim)},
            {"layer_types", layerTypesJson(c.layerTypes)},
            {"eos_token_ids", c.eosTokenIds}});
  if (c.numLayersOfType(LayerType::LinearAttention) > 0) {
    j["linear_attention"] = {{"conv_kernel", c.linearConvKernelDim},
                             {"key_heads", c.linearNumKeyHeads},
                             {"value_heads", c.linearNumValueHeads},
                             {"key_head_dim", c.linearKeyHeadDim},
                             {"value_head_dim", c.linearValueHeadDim}};
  }
  if (c.moe) {
    json sparse = json::array();
    for (int i = 0; i < c.numHiddenLayers; ++i)
      if (c.moe->moeLayer(i)) sparse.push_back(i);
    j["moe"] = {{"experts", c.moe->numExperts},
                {"experts_per_token", c.moe->numExpertsPerToken},
                {"moe_intermediate_size", c.moe->moeIntermediateSize},
                {"shared_expert_intermediate_size", c.moe->sharedExpertIntermediateSize},
                {"norm_topk_prob", c.moe->normTopkProb},
                {"router", c.moe->scoring == RouterScoring::Sigmoid ? "sigmoid" : "softmax"},
                {"sparse_layers", sparse}};
    if (c.moe->scoring == RouterScoring::Sigmoid)
      j["moe"].update({{"n_group", c.moe->numGroups},
                       {"topk_group", c.moe->topkGroups},
                       {"routed_scaling_factor", c.moe->routedScalingFactor}});
  }
  if (c.slidingWindow) j["sliding_window"] = *c.slidingWindow;
  if (c.attentionSinks) j["attention_sinks"] = true;
  if (c.mlpBias) j["mlp_bias"] = true;
  if (c.quantization) j["quantization"] = c.quantization->method;
  return j;
}

// vLLM's names for a drafter's attention: "all non-causal full", "causal sliding + non-causal
// full", "all sliding non-causal", "all sliding causal" (and "all causal full" under is_causal).
std::string attentionStyle(const DrafterConfig& c) {
  const auto sliding = std::count(c.layerTypes.begin(), c.layerTypes.end(), LayerType::SlidingAttention);
  auto causality = [&](bool slidingLayer) { return c.isCausal.value_or(slidingLayer) ? "causal" : "non-causal"; };
  if (sliding == 0) return std::string("all ") + causality(false) + " full";
  if (sliding == static_cast<std::ptrdiff_t>(c.layerTypes.size())) return std::string("all sliding ") + causality(true);
  return std::string(causality(true)) + " sliding + " + causality(false) + " full";
}

// The taps as speculators and transformers' hidden_states number them: the embedding output is 0.
std::vector<int> hiddenStateIds(const DrafterConfig& c) {
  std::vector<int> ids;
  for (int tap : c.targetLayerIds) ids.push_back(tap + 1);
  return ids;
}

std::string intList(const std::vector<int>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

// The fields two formats (z-lab's dflash 0.1.0 and SpecForge, which share its numbering, and
// vLLM's speculators) would state or read differently for this checkpoint: what it states, and
// what another reader would do with it. Each difference is a reported train/serve mismatch.
json conventionsJson(const DrafterConfig& c) {
  json out = json::array();
  auto add = [&](const std::string& field, const std::string& stated, const std::string& elsewhere) {
    out.push_back({{"field", field}, {"stated", stated}, {"other_readers", elsewhere}});
  };
  const std::vector<int> hiddenStates = hiddenStateIds(c);
  if (c.format == DrafterFormat::Speculators)
    add("taps", "aux_hidden_state_layer_ids " + intList(hiddenStates) + " (hidden_states; 0 is the embedding output)",
        "z-lab and SpecForge state these as dflash_config.target_layer_ids " + intList(c.targetLayerIds) +
            " (layer outputs); the same numbers copied there tap one layer later");
  else
    add("taps", "dflash_config.target_layer_ids " + intList(c.targetLayerIds) + " (layer outputs, as SpecForge)",
        "speculators states these as aux_hidden_state_layer_ids " + intList(hiddenStates) +
            " (hidden_states); the same numbers copied there tap one layer earlier");
  add("mask", c.maskTokenId ? "token id " + std::to_string(*c.maskTokenId) + ", embedded by the target's embedding"
                            : "no mask token id",
      "z-lab and SpecForge read dflash_config.mask_token_id, speculators the top-level mask_token_id; none of the "
      "three saves a learned mask embedding");
  if (c.sampleFromAnchor)
    add("drafts", "sample_from_anchor: " + std::to_string(c.draftsPerBlock()) + " drafts a block, the anchor's slot included",
        "z-lab's loop has no such field and drafts slots 1..B-1, one row later than trained; speculators' DSpark "
        "defaults to this when the field is absent, its DFlash does not");
  else
    add("drafts", std::to_string(c.draftsPerBlock()) + " drafts a block, slots 1..B-1",
        c.dspark ? "speculators' DSpark samples from the anchor when sample_from_anchor is absent: state it false"
                 : "as every reader does when sample_from_anchor is absent");
  if (c.draftVocabSize)
    add("vocabulary", std::to_string(*c.draftVocabSize) + " draft ids through the checkpoint's own lm_head, mapped by "
                          "d2t to target ids; the target's embedding",
        "a loader that ignores d2t scores draft id i as target id i (diagnose vocab-map:identity); one that takes "
        "the target's LM head drops the drafter's own rows (lm-head:target)");
  else
    add("vocabulary", "the target's: its embedding and its LM head (no lm_head of its own)",
        "the same in every format");
  const int rotary = c.rope.rotaryDim(c.headDim);
  add("rope", "theta " + std::to_string(static_cast<long long>(c.rope.theta)) + ", rotary dim " +
                  std::to_string(rotary) + " of " + std::to_string(c.headDim),
      rotary < c.headDim ? "a trainer that ignores partial_rotary_factor rotates all " + std::to_string(c.headDim) +
                               " channels (diagnose rope:partial)"
                         : "a drafter trained with another base reads this one's positions wrong (diagnose rope:theta)");
  if (std::ranges::count(c.layerTypes, LayerType::SlidingAttention) > 0) {
    const bool causal = c.isCausal.value_or(true);  // sliding layers: causal unless told otherwise
    const std::string window = "window " + std::to_string(c.slidingWindow.value_or(0)) + ", " +
                               (causal ? "causal" : "non-causal") + ", ";
    if (c.format == DrafterFormat::Speculators)
      add("sliding", window + "served counting back from each slot (the serving rule)",
          std::string("speculators trained it counting from the anchor, the W positions before it for every slot: "
                      "slot i saw i + 1 positions more than served (diagnose window-from:anchor); z-lab reads "
                      "is_causal only, without which its sliding layers are causal") +
              (causal ? "" : ", unlike this drafter's"));
    else
      add("sliding", window + "counted back from each slot's position (z-lab, SpecForge, the serving rule)",
          "speculators counts it from the anchor (slot i sees i + 1 positions more; diagnose window-from:anchor) and "
          "reads sliding_window_non_causal for the causality (DFlash2 defaults it true)");
  }
  add("block", "block size " + std::to_string(c.blockSize),
      c.speculators && c.speculators->speculativeTokens
          ? "speculators' speculative_tokens " + std::to_string(*c.speculators->speculativeTokens) +
                " (the drafts a block) must agree with it"
          : "servers verify " + std::to_string(c.draftsPerBlock()) + " drafts a block");
  if (c.dspark && c.dspark->markovRank > 0 && c.dspark->markovHeadType == MarkovHeadType::Rnn)
    add("rnn state", c.dspark->rnnStepsOverAnchorRow ? "steps over the anchor's row first (speculators)"
                                                     : "starts at the first drafted slot (SpecForge)",
        "the other package starts it the other way: the same weights draft otherwise");
  return out;
}

json drafterJson(const DrafterConfig& c) {
  json j = geometryJson(c);
  j.update({{"model_type", c.modelType},
            {"architectures", c.architectures},
            {"block_size", c.blockSize},
            {"target_layer_ids", c.targetLayerIds},
            {"target_layer_ids_source", c.targetLayerIdsFromConfig ? "config" : "default rule"},
            {"num_target_layers", c.numTargetLayers},
            {"rope", ropeJson(c.rope, c.headDim)},
            {"layer_types", layerTypesJson(c.layerTypes)}});
  j["mask_token_id"] = c.maskTokenId ? json(*c.maskTokenId) : json(nullptr);
  if (c.slidingWindow) j["sliding_window"] = *c.slidingWindow;
  j["is_causal"] = c.isCausal ? json(*c.isCausal) : json(nullptr);
  j["attention_style"] = attentionStyle(c);
  j["input_embedding_scale"] = c.inputEmbeddingScale;
  j["output_multiplier"] = c.outputMultiplier;
  j["final_logit_softcapping"] = c.finalLogitSoftcapping ? json(*c.finalLogitSoftcapping) : json(nullptr);
  if (c.dflash2)
    j["dflash2"] = {{"conv_kernel_size", c.dflash2->convKernelSize},
                    {"conv_group_size", c.dflash2->convGroupSize},
                    {"selector_rank", c.dflash2->selectorRank},
                    {"selector_top_k", c.dflash2->selectorTopK}};
  if (c.dspark)
    j["dspark"] = {{"markov_rank", c.dspark->markovRank},
                   {"markov_head_type", std::string(markovHeadTypeName(c.dspark->markovHeadType))},
                   {"enable_confidence_head", c.dspark->confidenceHead},
                   {"confidence_head_with_markov", c.dspark->confidenceWithMarkov},
                   // Where the rnn head's state starts: the two packages differ, and the same weights
                   // read the other way draft otherwise.
                   {"rnn_state_starts", c.dspark->rnnStepsOverAnchorRow ? "anchor row (speculators)"
                                                                         : "first drafted slot (SpecForge)"}};
  // Where the drafts come from: DFlash's slots 1..B-1, or every slot from the anchor (B drafts).
  j["sample_from_anchor"] = c.sampleFromAnchor;
  j["drafts_per_block"] = c.draftsPerBlock();
  // The same taps as each format's file states them: z-lab names the layer whose output is
  // tapped, speculators (and transformers' output_hidden_states) count the embedding as 0. A
  // tap one layer off between training export and serving is this difference misread.
  const std::vector<int> hiddenStates = hiddenStateIds(c);
  j["taps_by_format"] = {{"zlab_target_layer_ids", c.targetLayerIds},
                         {"speculators_aux_hidden_state_layer_ids", hiddenStates},
                         {"transformers_hidden_states", hiddenStates}};
  j["conventions"] = conventionsJson(c);
  j["format"] = drafterFormatName(c.format);
  j["draft_vocab_size"] = c.draftVocabSize ? json(*c.draftVocabSize) : json(nullptr);
  if (c.speculators) {
    const SpeculatorsFields& s = *c.speculators;
    j["speculators"] = {{"speculators_model_type", s.modelType},
                        {"speculators_version", s.version},
                        {"aux_hidden_state_layer_ids", s.auxHiddenStateLayerIds},
                        {"sliding_window_non_causal", s.slidingWindowNonCausal},
                        {"proposal_type", s.proposalType},
                        {"speculative_tokens", s.speculativeTokens ? json(*s.speculativeTokens) : json(nullptr)},
                        {"verifier_accept_k", s.verifierAcceptK ? json(*s.verifierAcceptK) : json(nullptr)},
                        {"accept_tolerance", s.acceptTolerance ? json(*s.acceptTolerance) : json(nullptr)},
                        {"verifier_name_or_path", s.verifierNameOrPath},
                        {"verifier_architectures", s.verifierArchitectures}};
  }
  json warnings = json::array();
  for (const auto& w : c.warnings) warnings.push_back({{"field", w.field}, {"message", w.message}});
  j["warnings"] = warnings;
  return j;
}

json weightsJson(const fs::path& modelDir) {
  if (!hasWeights(modelDir)) return nullptr;
  const WeightsSummary s = summarizeWeights(Checkpoint::open(modelDir, NameMapping::identity()));
  json dtypes = json::array();
  for (const DTypeTally& t : s.dtypes)
    dtypes.push_back({{"dtype", dtypeName(t.dtype)}, {"tensors", t.tensors}, {"elements", t.elements}, {"bytes", t.bytes}});
  return {{"shards", s.shards},       {"tensors", s.tensors},
          {"parameters", s.parameters}, {"bytes", s.bytes},
          {"skipped_parameters", s.skippedParameters}, {"dtypes", dtypes},
          {"header_sha256", s.headerSha256}};
}

// The tensors the config implies against the checkpoint's headers; null when there are no
// weights, or no layout is known for the family.
json layoutJson(const fs::path& modelDir, const std::optional<std::vector<ExpectedTensor>>& expected,
                const NameMapping& mapping) {
  if (!expected || !hasWeights(modelDir)) return nullptr;
  json issues = json::array();
  for (const LayoutIssue& i : checkWeightLayout(*expected, Checkpoint::open(modelDir, mapping)))
    issues.push_back({{"tensor", i.tensor}, {"expected", i.expected}, {"found", i.found}});
  return {{"expected_tensors", expected->size()}, {"issues", issues}};
}

json problemsJson(const std::vector<ConfigProblem>& problems) {
  json list = json::array();
  for (const ConfigProblem& p : problems) list.push_back({{"field", p.field}, {"message", p.message}});
  return list;
}

json memoryJson(const fs::path& modelDir, const TargetConfig& config, const engine::ModelOptions& placement) {
  const engine::MemoryPlan plan = engine::planTargetMemory(Checkpoint::open(modelDir), config, placement);
  json devices = json::array();
  for (const engine::DevicePlan& d : plan.devices)
    devices.push_back({{"device", d.device},
                       {"first_layer", d.firstLayer},
                       {"layers", d.layerCount},
                       {"embeddings", d.embeddings},
                       {"head", d.head},
                       {"parameters", d.parameters},
                       {"bytes", d.bytes},
                       {"available", d.available ? json(*d.available) : json(nullptr)},
                       {"available_source", d.availableSource},
                       {"fits", d.fits()}});
  json j = {{"dtype", plan.dtype},
            {"total_parameters", plan.totalParameters},
            {"active_parameters", plan.activeParameters},
            {"devices", devices},
            {"fits", true},
            {"refusal", nullptr}};
  try {
    engine::requirePlanFits(plan);
  } catch (const UsageError& e) {
    j["fits"] = false;
    j["refusal"] = e.what();
  }
  return j;
}

std::optional<Checkpoint> openIfPresent(const fs::path& modelDir) {
  if (!hasWeights(modelDir)) return std::nullopt;
  return Checkpoint::open(modelDir, NameMapping::identity());
}

}  // namespace

bool modelIsClean(const json& model) {
  const json& layout = model["weight_layout"];
  return model["validation"]["valid"].get<bool>() && (layout.is_null() || layout["issues"].empty()) &&
         (!model.contains("memory") || model["memory"]["fits"].get<bool>());
}

json describeModel(const fs::path& dirOrConfig, const engine::ModelOptions& placement, std::optional<int> targetNumLayers) {
  const fs::path configPath = configPathOf(dirOrConfig);
  const ConfigKind kind = detectConfigKindOf(configPath);
  json j = {{"path", dirOrConfig.string()}, {"config", configPath.string()}, {"kind", configKindName(kind)}};
  const fs::path modelDir = modelDirOf(dirOrConfig);
  try {
    if (kind == ConfigKind::Target) {
      const TargetConfig config = parseTargetConfig(configPath);
      j["geometry"] = targetJson(config);
      j["weight_layout"] = layoutJson(modelDir, expectedTargetTensors(config), NameMapping::qwenText());
      if (hasWeights(modelDir)) j["memory"] = memoryJson(modelDir, config, placement);
    } else {
      const DrafterConfig config = parseDrafterConfig(configPath, targetNumLayers);
      j["geometry"] = drafterJson(config);
      j["weight_layout"] = layoutJson(modelDir, expectedDrafterTensors(config), NameMapping::dflashDrafter());
    }
    j["validation"] = {{"valid", true}, {"problems", json::array()}};
  } catch (const ConfigValidationError& e) {
    j["geometry"] = nullptr;
    j["validation"] = {{"valid", false}, {"problems", problemsJson(e.problems())}};
    j["weight_layout"] = nullptr;
  }
  j["weights"] = weightsJson(modelDir);
  return j;
}

json describePair(const fs::path& drafter, const fs::path& target, const engine::ModelOptions& placement) {
  const TargetConfig t = parseTargetConfig(configPathOf(target));
  const DrafterConfig d = parseDrafterConfig(configPathOf(drafter), t.numHiddenLayers);
  const std::optional<Checkpoint> drafterWeights = openIfPresent(modelDirOf(drafter));
  const std::optional<Checkpoint> targetWeights = openIfPresent(modelDirOf(target));
  const CheckpointFacts facts = checkpointFacts(drafterWeights ? &*drafterWeights : nullptr,
                                                targetWeights ? &*targetWeights : nullptr);
  const CompatibilityReport report = checkCompatibility(d, t, facts);
  json issues = json::array();
  for (const CompatibilityIssue& i : report.issues) {
    issues.push_back({{"field", i.field},
                      {"drafter_value", i.drafterValue},
                      {"target_value", i.targetValue},
                      {"message", i.message},
                      {"severity", severityName(i.severity)}});
  }
  json compatibility = {{"drafter", drafter.string()},
                        {"target", target.string()},
                        {"compatible", report.compatible()},
                        {"errors", report.count(Severity::Error)},
                        {"warnings", report.count(Severity::Warning)},
                        {"checked_fc_weight", facts.drafterFcWeightShape.has_value()},
                        {"checked_embedding_rows", facts.targetEmbeddingRows.has_value()},
                        {"issues", issues}};
  return {{"drafter", describeModel(drafter, placement, t.numHiddenLayers)},
          {"target", describeModel(target, placement)},
          {"compatibility", compatibility}};
}

}  // namespace dfi::eval
