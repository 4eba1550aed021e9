#include "dfi/tensorfile/target_config.h"

#include <algorithm>

#include "config_json.h"
#include "decoder_geometry.h"
#include "layer_types_field.h"
#include "rope_field.h"

namespace dfi::tensorfile {
namespace {

using detail::ConfigObject;
using detail::ProblemList;

// Which mixture-of-experts fields a model_type reads, as its transformers config class does.
enum class MoeFields {
  None,
  // Qwen3-MoE: num_experts (alias num_local_experts), decoder_sparse_step, mlp_only_layers,
  // norm_topk_prob (default false), no shared expert.
  Qwen3Moe,
  // Qwen3-Next: the same layer rule, norm_topk_prob default true, a shared expert;
  // num_experts 0 means dense MLPs throughout.
  Qwen3Next,
  // Qwen3.5-MoE: every layer sparse with a shared expert, top-k always renormalised
  // (its config class has no decoder_sparse_step, mlp_only_layers or norm_topk_prob).
  Qwen3_5Moe,
};

// One accepted model_type: which family it is, whether the language model sits under
// text_config (and that level's own model_type), its experts, and the architectures that may
// name it.
struct FamilySpec {
  std::string modelType;
  TargetFamily family;
  bool nestedTextConfig;
  std::string textModelType;  // text_config.model_type when nested
  MoeFields moe;
  std::vector<std::string> architectures;
};

const std::vector<FamilySpec>& families() {
  static const std::vector<FamilySpec> table = {
      {"qwen3", TargetFamily::Qwen3, false, "", MoeFields::None, {"Qwen3ForCausalLM"}},
      {"qwen3_moe", TargetFamily::Qwen3, false, "", MoeFields::Qwen3Moe, {"Qwen3MoeForCausalLM"}},
      {"qwen3_5", TargetFamily::Qwen3_5, true, "qwen3_5_text", MoeFields::None,
       {"Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM"}},
      // What Qwen3_5ForCausalLM.save_pretrained writes: the text config, flat.
      {"qwen3_5_text", TargetFamily::Qwen3_5, false, "", MoeFields::None, {"Qwen3_5ForCausalLM"}},
      {"qwen3_5_moe", TargetFamily::Qwen3_5, true, "qwen3_5_moe_text", MoeFields::Qwen3_5Moe,
       {"Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM"}},
      {"qwen3_5_moe_text", TargetFamily::Qwen3_5, false, "", MoeFields::Qwen3_5Moe, {"Qwen3_5MoeForCausalLM"}},
      {"qwen3_next", TargetFamily::Qwen3Next, false, "", MoeFields::Qwen3Next, {"Qwen3NextForCausalLM"}},
      {"llama", TargetFamily::Llama, false, "", MoeFields::None, {"LlamaForCausalLM"}},
      // gpt-oss's experts are its own kind (readGptOssExperts), not the Qwen MoE fields.
      {"gpt_oss", TargetFamily::GptOss, false, "", MoeFields::None, {"GptOssForCausalLM"}},
  };
  return table;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const FamilySpec* findFamily(const ConfigObject& root) {
  std::optional<std::string> modelType = root.optionalString("model_type");
  if (!modelType) {
    root.problems().add("model_type", "required field is missing (supported: " +
                                          joined(supportedTargetModelTypes()) + ")");
    return nullptr;
  }
  for (const FamilySpec& f : families())
    if (f.modelType == *modelType) return &f;
  root.problems().add("model_type", "unsupported model_type \"" + *modelType +
                                        "\" (supported: " + joined(supportedTargetModelTypes()) + ")");
  return nullptr;
}

void checkArchitectures(const ConfigObject& root, const FamilySpec& family,
                        std::vector<std::string>& out) {
  out = root.optionalStringList("architectures").value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (std::find(family.architectures.begin(), family.architectures.end(), out[i]) !=
        family.architectures.end())
      continue;
    std::string hint = out[i].find("DFlash") != std::string::npos
                           ? " (this is a DFlash drafter config, not a target)"
                           : "";
    root.problems().add("architectures[" + std::to_string(i) + "]",
                        "unsupported architecture \"" + out[i] + "\" for model_type " + family.modelType +
                            hint + " (supported: " + joined(family.architectures) + ")");
  }
}

void readQwen3Attention(const ConfigObject& level, TargetConfig& c) {
  // Qwen3Config keeps sliding_window only when use_sliding_window is set; an absent
  // sliding_window (not null) means the class default 4096.
  if (level.optionalBool("use_sliding_window").value_or(false)) {
    if (level.has("sliding_window")) c.slidingWindow = level.optionalInt("sliding_window", 1);
    else if (!level.json().contains("sliding_window")) c.slidingWindow = 4096;
  }
  int maxWindowLayers = level.optionalInt("max_window_layers", 0).value_or(28);
  c.layerTypes = detail::readExplicitLayerTypes(level, c.numHiddenLayers,
                                                {LayerType::FullAttention, LayerType::SlidingAttention})
                     .value_or(detail::qwen3LayerTypes(c.numHiddenLayers, c.slidingWindow, maxWindowLayers));
  if (c.numLayersOfType(LayerType::SlidingAttention) > 0 && !c.slidingWindow)
    level.problems().add(level.pathOf("sliding_window"),
                         "layer_types has sliding_attention layers but no sliding window is in use "
                         "(use_sliding_window false or sliding_window null)");
}

void readHybridAttention(const ConfigObject& level, TargetConfig& c) {
  std::optional<std::vector<LayerType>> explicitTypes = detail::readExplicitLayerTypes(
      level, c.numHiddenLayers, {LayerType::FullAttention, LayerType::LinearAttention});
  if (explicitTypes) {
    c.layerTypes = *explicitTypes;
  } else if (!level.has("layer_types")) {
    int interval = level.optionalInt("full_attention_interval", 1).value_or(4);
    c.layerTypes = detail::hybridLayerTypes(c.numHiddenLayers, interval);
  }
  // transformers' Qwen3.5 / Next attention always has the output gate.
  if (level.optionalBool("attn_output_gate").value_or(true) == false)
    level.problems().add(level.pathOf("attn_output_gate"),
                         "false is not supported: this architecture always gates attention output");
  c.attnOutputGate = true;
  c.linearConvKernelDim = level.requiredInt("linear_conv_kernel_dim", 1).value_or(0);
  c.linearKeyHeadDim = level.requiredInt("linear_key_head_dim", 1).value_or(0);
  c.linearValueHeadDim = level.requiredInt("linear_value_head_dim", 1).value_or(0);
  c.linearNumKeyHeads = level.requiredInt("linear_num_key_heads", 1).value_or(0);
  c.linearNumValueHeads = level.requiredInt("linear_num_value_heads", 1).value_or(0);
  // Gated DeltaNet repeats each key head over linear_num_value_heads / linear_num_key_heads
  // value heads.
  if (c.linearNumKeyHeads > 0 && c.linearNumValueHeads % c.linearNumKeyHeads != 0)
    level.problems().add(level.pathOf("linear_num_value_heads"),
                         std::to_string(c.linearNumValueHeads) + " is not a multiple of linear_num_key_heads " +
                             std::to_string(c.linearNumKeyHeads));
}

// Qwen3MoeConfig maps num_experts onto num_local_experts (its attribute_map): save_pretrained
// writes the latter, published checkpoints the former.
std::optional<int> readNumExperts(const ConfigObject& level, MoeFields fields) {
  const bool local = fields == MoeFields::Qwen3Moe && level.has("num_local_experts");
  if (local && level.has("num_experts"))
    level.problems().add(level.pathOf("num_local_experts"),
                         "both num_experts and num_local_experts are given; transformers reads one of them");
  return level.requiredInt(local ? "num_local_experts" : "num_experts", fields == MoeFields::Qwen3Next ? 0 : 1);
}

void readMoe(const ConfigObject& level, MoeFields fields, TargetConfig& c) {
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

// GptOssConfig: layers alternate sliding (even index) and full (odd index) unless layer_types
// says otherwise; sliding_window defaults to 128, and every layer has attention sinks.
void readGptOssAttention(const ConfigObject& level, TargetConfig& c) {
  c.layerTypes = detail::readExplicitLayerTypes(level, c.numHiddenLayers,
                                                {LayerType::FullAttention, LayerType::SlidingAttention})
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

// gpt-oss: every layer's MLP is num_local_experts experts of intermediate_size, top
// num_experts_per_tok of them per token.
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

// Weight quantisation: MXFP4 experts (gpt-oss) are dequantised at load; every other method
// (GPTQ, AWQ, FP8 block scales, bitsandbytes...) would be misread as plain weights, so it is
// refused by name.
void readQuantization(const ConfigObject& top, TargetConfig& c) {
  std::optional<ConfigObject> q = top.optionalObject("quantization_config");
  if (!q) return;
  std::optional<std::string> method = q->optionalString("quant_method");
  if (!method) {
    top.problems().add(q->pathOf("quant_method"), "required in a quantization_config (supported: mxfp4)");
    return;
  }
  if (*method != "mxfp4" || c.family != TargetFamily::GptOss) {
    top.problems().add(q->pathOf("quant_method"),
                       "quantization method \"" + *method + "\" is not supported for model_type " + c.modelType +
                           " (supported: mxfp4 for gpt_oss experts; dequantize the checkpoint to bf16 first)");
    return;
  }
  c.quantization = QuantizationConfig{
      .method = *method,
      .modulesToNotConvert = q->optionalStringList("modules_to_not_convert").value_or(std::vector<std::string>{})};
}

detail::GeometryDefaults geometryDefaults(TargetFamily family) {
  switch (family) {
    case TargetFamily::Qwen3: return {.kvHeadsDefaultToHeads = true};
    case TargetFamily::Llama:
      return {.kvHeadsDefaultToHeads = true, .headDimFromHeads = true, .maxPositionEmbeddings = 2048};
    case TargetFamily::GptOss:
      return {.kvHeadsDefaultToHeads = true, .headDim = 64, .rmsNormEps = 1e-5, .attentionBias = true,
              .maxPositionEmbeddings = 131072};
    case TargetFamily::Qwen3_5:
    case TargetFamily::Qwen3Next: break;
  }
  return {};
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

std::string_view targetFamilyName(TargetFamily family) {
  switch (family) {
    case TargetFamily::Qwen3: return "Qwen3";
    case TargetFamily::Qwen3_5: return "Qwen3.5";
    case TargetFamily::Qwen3Next: return "Qwen3-Next";
    case TargetFamily::Llama: return "Llama";
    case TargetFamily::GptOss: return "gpt-oss";
  }
  return "unknown";
}

bool MoeConfig::moeLayer(int index) const {
  return numExperts > 0 && std::find(mlpOnlyLayers.begin(), mlpOnlyLayers.end(), index) == mlpOnlyLayers.end() &&
         (index + 1) % decoderSparseStep == 0;
}

int TargetConfig::numLayersOfType(LayerType type) const {
  return static_cast<int>(std::count(layerTypes.begin(), layerTypes.end(), type));
}

const std::vector<std::string>& supportedTargetModelTypes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const FamilySpec& f : families()) out.push_back(f.modelType);
    return out;
  }();
  return names;
}

const std::vector<std::string>& supportedTargetArchitectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const FamilySpec& f : families())
      for (const std::string& a : f.architectures)
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    return out;
  }();
  return names;
}

TargetConfig parseTargetConfigText(std::string_view jsonText, const std::string& origin) {
  const nlohmann::json root = detail::parseConfigJson(jsonText, origin);
  ProblemList problems;
  ConfigObject top(root, "", problems);
  const FamilySpec* family = findFamily(top);
  if (!family) problems.throwIfAny(origin);

  TargetConfig c;
  c.family = family->family;
  c.modelType = family->modelType;
  c.rawJson = std::string(jsonText);
  checkArchitectures(top, *family, c.architectures);

  std::optional<ConfigObject> text = top;
  if (family->nestedTextConfig) {
    text = top.optionalObject("text_config");
    if (!text) {
      problems.add("text_config", "required for model_type " + family->modelType +
                                      " (it holds the language model's parameters)");
      problems.throwIfAny(origin);
    }
    c.textConfigPath = "text_config";
    if (auto inner = text->optionalString("model_type"); inner && *inner != family->textModelType)
      problems.add("text_config.model_type",
                   "expected \"" + family->textModelType + "\", found \"" + *inner + "\"");
  }
  const ConfigObject& level = *text;

  detail::GeometryDefaults defaults = geometryDefaults(c.family);
  defaults.hasDenseMlp = family->moe != MoeFields::Qwen3_5Moe;  // Qwen3.5-MoE: no intermediate_size
  detail::DecoderGeometry g = detail::readDecoderGeometry(level, defaults);
  c.hiddenSize = g.hiddenSize;
  c.intermediateSize = g.intermediateSize;
  c.numHiddenLayers = g.numHiddenLayers;
  c.numAttentionHeads = g.numAttentionHeads;
  c.numKeyValueHeads = g.numKeyValueHeads;
  c.headDim = g.headDim;
  c.vocabSize = g.vocabSize;
  c.rmsNormEps = g.rmsNormEps;
  c.attentionBias = g.attentionBias;
  c.maxPositionEmbeddings = g.maxPositionEmbeddings;
  // Qwen3_5ForConditionalGeneration ties by its top-level flag; the text flag is what a
  // text-only save writes.
  c.tieWordEmbeddings = (family->nestedTextConfig && top.has("tie_word_embeddings") ? top : level)
                            .optionalBool("tie_word_embeddings")
                            .value_or(false);

  switch (c.family) {
    case TargetFamily::Qwen3: readQwen3Attention(level, c); break;
    case TargetFamily::Llama:
      c.layerTypes.assign(c.numHiddenLayers, LayerType::FullAttention);
      c.mlpBias = level.optionalBool("mlp_bias").value_or(false);
      break;
    case TargetFamily::GptOss:
      readGptOssAttention(level, c);
      readGptOssExperts(level, c);
      break;
    case TargetFamily::Qwen3_5:
    case TargetFamily::Qwen3Next: readHybridAttention(level, c); break;
  }
  readMoe(level, family->moe, c);
  readQuantization(top, c);

  const bool hybrid = c.family == TargetFamily::Qwen3_5 || c.family == TargetFamily::Qwen3Next;
  const std::optional<double> defaultTheta =
      c.family == TargetFamily::GptOss ? std::optional(150000.0) : std::nullopt;
  if (c.family == TargetFamily::GptOss && !level.has("rope_scaling") && !level.has("rope_parameters"))
    c.rope = gptOssDefaultRope(level.optionalNumber("rope_theta").value_or(*defaultTheta));
  else
    c.rope = detail::readRope(level, {.layerTypes = c.layerTypes,
                                      .defaultPartialRotaryFactor = hybrid ? std::optional(0.25) : std::nullopt,
                                      .maxPositionEmbeddings = c.maxPositionEmbeddings,
                                      .headDim = c.headDim,
                                      .defaultTheta = defaultTheta});

  const ConfigObject* fallback = family->nestedTextConfig ? &top : nullptr;
  std::vector<int> bos = detail::readTokenIds(level, fallback, "bos_token_id");
  if (!bos.empty()) c.bosTokenId = bos.front();
  c.eosTokenIds = detail::readTokenIds(level, fallback, "eos_token_id");
  for (int id : c.eosTokenIds)
    if (c.vocabSize > 0 && id >= c.vocabSize)
      problems.add(level.pathOf("eos_token_id"), "token " + std::to_string(id) +
                                                     " is not below vocab_size " + std::to_string(c.vocabSize));
  problems.throwIfAny(origin);
  return c;
}

TargetConfig parseTargetConfig(const std::filesystem::path& configJson) {
  return parseTargetConfigText(detail::readConfigFile(configJson), configJson.string());
}

}  // namespace dfi::tensorfile
