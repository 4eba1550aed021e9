#include "dfi/modelspec/target_config.h"

#include <algorithm>

#include "config_json.h"
#include "decoder_geometry.h"
#include "families/family_module.h"
#include "families/qwen_moe_fields.h"
#include "quantization_config.h"
#include "rope_field.h"

namespace dfi::modelspec {
namespace {

using detail::ConfigObject;
using detail::ProblemList;
using detail::FamilyModule;
using detail::ModelTypeSpec;

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

struct FoundModelType {
  const FamilyModule* family;
  const ModelTypeSpec* spec;
};

std::optional<FoundModelType> findModelType(const ConfigObject& root) {
  std::optional<std::string> modelType = root.optionalString("model_type");
  if (!modelType) {
    root.problems().add("model_type", "required field is missing (supported: " +
                                          joined(supportedTargetModelTypes()) + ")");
    return std::nullopt;
  }
  for (const FamilyModule* f : detail::familyModules())
    for (const ModelTypeSpec& spec : f->modelTypes)
      if (spec.modelType == *modelType) return FoundModelType{f, &spec};
  root.problems().add("model_type", "unsupported model_type \"" + *modelType +
                                        "\" (supported: " + joined(supportedTargetModelTypes()) + ")");
  return std::nullopt;
}

void checkArchitectures(const ConfigObject& root, const ModelTypeSpec& spec,
                        std::vector<std::string>& out) {
  out = root.optionalStringList("architectures").value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (std::find(spec.architectures.begin(), spec.architectures.end(), out[i]) !=
        spec.architectures.end())
      continue;
    std::string hint = out[i].find("DFlash") != std::string::npos
                           ? " (this is a DFlash drafter config, not a target)"
                           : "";
    root.problems().add("architectures[" + std::to_string(i) + "]",
                        "unsupported architecture \"" + out[i] + "\" for model_type " + spec.modelType +
                            hint + " (supported: " + joined(spec.architectures) + ")");
  }
}

// Weight quantisation (quantization_config.cpp): a method the engine cannot dequantise would be
// misread as plain weights, so it is refused by name.
void readQuantization(const ConfigObject& top, const FamilyModule& family, TargetConfig& c) {
  if (std::optional<ConfigObject> q = top.optionalObject("quantization_config"))
    c.quantization = detail::readQuantizationConfig(*q, c.modelType, family.quantizationMethods);
}

// What a flat partial_rotary_factor falls back to: the family's own field for it if the file has
// one (a flat partial_rotary_factor still wins, as in transformers), else its class default.
std::optional<double> defaultPartialRotaryFactor(const FamilyModule& module, const ConfigObject& level,
                                                 const TargetConfig& c) {
  if (module.partialRotaryFactorField)
    if (std::optional<double> own = module.partialRotaryFactorField(level, c)) return own;
  return module.defaultPartialRotaryFactor;
}

}  // namespace

std::string_view targetFamilyName(TargetFamily family) { return detail::familyModule(family).name; }

bool MoeConfig::moeLayer(int index) const {
  return numExperts > 0 && std::find(mlpOnlyLayers.begin(), mlpOnlyLayers.end(), index) == mlpOnlyLayers.end() &&
         (index + 1) % decoderSparseStep == 0;
}

int TargetConfig::numLayersOfType(LayerType type) const {
  return static_cast<int>(std::count(layerTypes.begin(), layerTypes.end(), type));
}

AttentionShape TargetConfig::attentionShape(int layer) const {
  return layerAttention.empty() ? AttentionShape{headDim, numKeyValueHeads} : layerAttention.at(layer);
}

const RopeConfig& TargetConfig::ropeOf(int layer) const {
  return slidingRope && layerTypes.at(layer) == LayerType::SlidingAttention ? *slidingRope : rope;
}

int TargetConfig::kvSourceLayer(int layer) const {
  const int firstShared = numHiddenLayers - numKvSharedLayers;
  if (layer < firstShared) return layer;
  for (int source = firstShared - 1; source >= 0; --source)
    if (layerTypes[source] == layerTypes[layer]) return source;
  return layer;  // parseTargetConfig refuses a shared layer type no earlier layer computes
}

int TargetConfig::mlpIntermediateSize(int layer) const {
  return useDoubleWideMlp && kvSourceLayer(layer) != layer ? 2 * intermediateSize : intermediateSize;
}

const std::vector<std::string>& supportedTargetModelTypes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const FamilyModule* f : detail::familyModules())
      for (const ModelTypeSpec& spec : f->modelTypes) out.push_back(spec.modelType);
    return out;
  }();
  return names;
}

const std::vector<std::string>& supportedTargetArchitectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const FamilyModule* f : detail::familyModules())
      for (const ModelTypeSpec& spec : f->modelTypes)
        for (const std::string& a : spec.architectures)
          if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    return out;
  }();
  return names;
}

TargetConfig parseTargetConfigText(std::string_view jsonText, const std::string& origin) {
  const nlohmann::json root = detail::parseConfigJson(jsonText, origin);
  ProblemList problems;
  ConfigObject top(root, "", problems);
  const std::optional<FoundModelType> found = findModelType(top);
  if (!found) problems.throwIfAny(origin);
  const FamilyModule& module = *found->family;
  const ModelTypeSpec* spec = found->spec;

  TargetConfig c;
  c.family = module.family;
  c.traits = module.traits;
  c.modelType = spec->modelType;
  c.rawJson = std::string(jsonText);
  checkArchitectures(top, *spec, c.architectures);

  std::optional<ConfigObject> text = top;
  if (spec->nestedTextConfig) {
    text = top.optionalObject("text_config");
    if (!text) {
      problems.add("text_config", "required for model_type " + spec->modelType +
                                      " (it holds the language model's parameters)");
      problems.throwIfAny(origin);
    }
    c.textConfigPath = "text_config";
    const std::vector<std::string>& accepted = spec->textModelTypes;
    const std::optional<std::string> inner = text->optionalString("model_type");
    if (inner && std::find(accepted.begin(), accepted.end(), *inner) == accepted.end()) {
      std::vector<std::string> quoted;
      for (const std::string& type : accepted) quoted.push_back("\"" + type + "\"");
      problems.add("text_config.model_type", std::string(accepted.size() > 1 ? "expected one of " : "expected ") +
                                                 joined(quoted) + ", found \"" + *inner + "\"");
    }
  }
  const ConfigObject& level = *text;

  detail::GeometryDefaults defaults = module.geometry;
  defaults.hasDenseMlp = spec->moe != detail::MoeFields::Qwen3_5Moe;  // Qwen3.5-MoE: no intermediate_size
  static_cast<DecoderGeometry&>(c) = detail::readDecoderGeometry(level, defaults);
  // Qwen3_5ForConditionalGeneration ties by its top-level flag; the text flag is what a
  // text-only save writes.
  c.tieWordEmbeddings = (spec->nestedTextConfig && top.has("tie_word_embeddings") ? top : level)
                            .optionalBool("tie_word_embeddings")
                            .value_or(module.tiesWordEmbeddingsByDefault);

  module.readLayers(level, c);
  detail::readQwenMoe(level, spec->moe, c);
  readQuantization(top, module, c);

  if (module.readRopes)
    module.readRopes(level, c);
  else if (module.ropeWhenAbsent && !level.has("rope_scaling") && !level.has("rope_parameters"))
    c.rope = module.ropeWhenAbsent(level.optionalNumber("rope_theta").value_or(*module.defaultTheta));
  else
    c.rope = detail::readRope(level, {.layerTypes = c.layerTypes,
                                      .defaultPartialRotaryFactor = defaultPartialRotaryFactor(module, level, c),
                                      .maxPositionEmbeddings = c.maxPositionEmbeddings,
                                      .headDim = c.headDim,
                                      .defaultTheta = module.defaultTheta});

  const ConfigObject* fallback = spec->nestedTextConfig ? &top : nullptr;
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
  TargetConfig c = parseTargetConfigText(detail::readConfigFile(configJson), configJson.string());
  if (!c.quantization) c.quantization = detail::readHfQuantConfig(configJson.parent_path());
  return c;
}

}  // namespace dfi::modelspec
