#include "rope_field.h"

#include <algorithm>
#include <cmath>

namespace dfi::modelspec::detail {
namespace {

constexpr double kDefaultTheta = 10000.0;  // transformers' RotaryEmbeddingConfigMixin

std::string number(double v) {
  nlohmann::json j = v;
  return j.dump();
}

bool usesRope(LayerType t) { return t != LayerType::LinearAttention; }

// Values given next to rope_parameters (flat rope_theta, partial_rotary_factor) fill in
// what a rope dict leaves out; transformers gives the dict priority.
struct FlatDefaults {
  double theta = kDefaultTheta;
  std::optional<double> partialRotaryFactor;
  std::string thetaField;    // where the flat values were read, for messages
  std::string partialField;
};

// transformers' _compute_llama3_parameters indexes all four keys, so each is required.
void readLlama3(const ConfigObject& dict, RopeConfig& rope) {
  bool complete = true;
  auto required = [&](std::string_view key, double& field) {
    std::optional<double> v = dict.optionalNumber(key);
    if (!v) dict.problems().add(dict.pathOf(key), "required for rope type llama3");
    else if (!(*v > 0)) dict.problems().add(dict.pathOf(key), "must be positive, found " + number(*v));
    complete = complete && v;
    field = v.value_or(field);
  };
  required("factor", rope.factor);
  required("low_freq_factor", rope.lowFreqFactor);
  required("high_freq_factor", rope.highFreqFactor);
  required("original_max_position_embeddings", rope.originalMaxPositionEmbeddings);
  if (complete && rope.highFreqFactor == rope.lowFreqFactor)
    dict.problems().add(dict.pathOf("high_freq_factor"), "must differ from low_freq_factor (the blend divides by their difference)");
}

RopeConfig readRopeDict(const ConfigObject& dict, const FlatDefaults& flat,
                        const RopeContext& context) {
  ProblemList& problems = dict.problems();
  RopeConfig rope;
  std::optional<std::string> ropeType = dict.optionalString("rope_type");
  std::optional<std::string> legacyType = dict.optionalString("type");
  if (ropeType && legacyType && *ropeType != *legacyType)
    problems.add(dict.pathOf("rope_type"), "\"" + *ropeType + "\" disagrees with " +
                                               dict.pathOf("type") + " \"" + *legacyType + "\"");
  rope.type = ropeType.value_or(legacyType.value_or("default"));
  if (rope.type != "default" && rope.type != "yarn" && rope.type != "llama3" && rope.type != "proportional") {
    problems.add(dict.pathOf(ropeType ? "rope_type" : "type"),
                 "unsupported rope type \"" + rope.type + "\" (supported: default, yarn, llama3, proportional)");
  }

  const bool ownTheta = dict.has("rope_theta");
  const std::string thetaField = ownTheta ? dict.pathOf("rope_theta") : flat.thetaField;
  rope.theta = ownTheta ? dict.optionalNumber("rope_theta").value_or(flat.theta) : flat.theta;
  if (!(rope.theta > 1)) problems.add(thetaField, "must be > 1, found " + number(rope.theta));
  const bool ownPartial = dict.has("partial_rotary_factor");
  const std::string partialField = ownPartial ? dict.pathOf("partial_rotary_factor") : flat.partialField;
  rope.partialRotaryFactor = ownPartial ? dict.optionalNumber("partial_rotary_factor").value_or(1.0)
                                        : flat.partialRotaryFactor.value_or(1.0);
  if (!(rope.partialRotaryFactor > 0 && rope.partialRotaryFactor <= 1)) {
    problems.add(partialField, "must be in (0, 1], found " + number(rope.partialRotaryFactor));
  } else if (context.headDim > 0) {
    int rotary = rope.rotaryDim(context.headDim);
    if (rotary < 2 || rotary % 2 != 0)
      problems.add(partialField,
                   number(rope.partialRotaryFactor) + " of head_dim " + std::to_string(context.headDim) +
                       " rotates " + std::to_string(rotary) + " channels; an even count >= 2 is needed");
  }
  if (auto section = dict.optionalIntList("mrope_section", 0)) rope.mropeSection = *section;
  rope.mropeInterleaved = dict.optionalBool("mrope_interleaved").value_or(false);

  if (rope.type == "yarn") {
    rope.originalMaxPositionEmbeddings = dict.optionalNumber("original_max_position_embeddings")
                                             .value_or(context.maxPositionEmbeddings);
    if (!(rope.originalMaxPositionEmbeddings > 0))
      problems.add(dict.pathOf("original_max_position_embeddings"),
                   "must be positive, found " + number(rope.originalMaxPositionEmbeddings));
    // A missing factor is the context extension ratio, as in transformers.
    std::optional<double> factor = dict.optionalNumber("factor");
    rope.factor = factor ? *factor
                         : (rope.originalMaxPositionEmbeddings > 0
                                ? context.maxPositionEmbeddings / rope.originalMaxPositionEmbeddings
                                : 1.0);
    if (!(rope.factor > 0)) problems.add(dict.pathOf("factor"), "must be positive, found " + number(rope.factor));
    // transformers reads these with `or`, so 0 means "use the default" as well.
    double betaFast = dict.optionalNumber("beta_fast").value_or(0);
    double betaSlow = dict.optionalNumber("beta_slow").value_or(0);
    rope.betaFast = betaFast != 0 ? betaFast : 32;
    rope.betaSlow = betaSlow != 0 ? betaSlow : 1;
    rope.attentionFactor = dict.optionalNumber("attention_factor");
    rope.mscale = dict.optionalNumber("mscale");
    rope.mscaleAllDim = dict.optionalNumber("mscale_all_dim");
    rope.truncate = dict.optionalBool("truncate").value_or(true);
  } else if (rope.type == "llama3") {
    readLlama3(dict, rope);
  } else if (rope.type == "proportional") {
    rope.factor = dict.optionalNumber("factor").value_or(1.0);
    if (!(rope.factor > 0)) problems.add(dict.pathOf("factor"), "must be positive, found " + number(rope.factor));
  }
  return rope;
}

FlatDefaults flatDefaults(const ConfigObject& level, const RopeContext& context) {
  FlatDefaults flat;
  flat.theta = level.optionalNumber("rope_theta").value_or(context.defaultTheta.value_or(kDefaultTheta));
  flat.thetaField = level.pathOf("rope_theta");
  flat.partialRotaryFactor = level.optionalNumber("partial_rotary_factor");
  flat.partialField = level.pathOf("partial_rotary_factor");
  if (!flat.partialRotaryFactor) flat.partialRotaryFactor = context.defaultPartialRotaryFactor;
  return flat;
}

}  // namespace

RopeConfig readRope(const ConfigObject& level, const RopeContext& context) {
  const FlatDefaults flat = flatDefaults(level, context);

  // transformers: `rope_scaling or rope_parameters` -- a non-empty rope_scaling wins.
  std::optional<ConfigObject> dict;
  if (auto scaling = level.optionalObject("rope_scaling"); scaling && !scaling->json().empty())
    dict = scaling;
  else
    dict = level.optionalObject("rope_parameters");
  if (!dict) {
    nlohmann::json empty = nlohmann::json::object();
    ConfigObject none(empty, level.pathOf("rope_parameters"), level.problems());
    return readRopeDict(none, flat, context);
  }

  // Nested per layer type (rope_parameters.full_attention.{...}) when keys name layer types
  // this model has; only the types that use RoPE matter (linear attention has none).
  std::vector<std::pair<std::string, RopeConfig>> perType;
  bool nested = false;
  for (LayerType t : {LayerType::FullAttention, LayerType::SlidingAttention, LayerType::LinearAttention}) {
    std::string key(layerTypeName(t));
    if (!dict->json().contains(key) ||
        std::find(context.layerTypes.begin(), context.layerTypes.end(), t) == context.layerTypes.end())
      continue;
    nested = true;
    if (!usesRope(t)) continue;
    if (auto sub = dict->optionalObject(key)) perType.emplace_back(dict->pathOf(key), readRopeDict(*sub, flat, context));
  }
  if (!nested) return readRopeDict(*dict, flat, context);
  if (perType.empty()) {
    dict->problems().add(dict->pathOf("full_attention"),
                         "rope parameters are nested by layer type but none is given for the attention layers");
    return RopeConfig{};
  }
  // One RopeConfig serves every attention layer, so the per-type entries must agree.
  for (std::size_t i = 1; i < perType.size(); ++i) {
    if (!(perType[i].second == perType[0].second))
      dict->problems().add(perType[i].first, "differs from " + perType[0].first +
                                                 "; per-layer-type RoPE is not supported");
  }
  return perType[0].second;
}

std::optional<RopeConfig> readRopeOfLayerType(const ConfigObject& level, LayerType type, const RopeContext& context) {
  const std::string key(layerTypeName(type));
  std::optional<ConfigObject> dict = level.optionalObject("rope_parameters");
  std::optional<ConfigObject> entry = dict ? dict->optionalObject(key) : std::nullopt;
  if (!entry) {
    level.problems().add(level.pathOf("rope_parameters") + "." + key,
                         "required: this model's " + key + " layers have a rope of their own");
    return std::nullopt;
  }
  return readRopeDict(*entry, flatDefaults(level, context), context);
}

}  // namespace dfi::modelspec::detail
