#pragma once
// Internal: one target family as a module, the way transformers keeps models/<family>/. A
// family is one FamilyModule (its model types, the defaults its config class fills in, its
// traits and the reader of its own fields) in one file here, listed once in families.cpp.
// parseTargetConfig (../target_config.cpp) does the rest the same way for every family.

#include <optional>
#include <string>
#include <vector>

#include "../config_json.h"
#include "../decoder_geometry.h"
#include "dfi/modelspec/target_config.h"

namespace dfi::modelspec::detail {

// Which Qwen mixture-of-experts fields a model_type reads, as its transformers config class
// does (readQwenMoe in qwen_moe_fields.h).
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

// One accepted model_type: whether the language model sits under text_config (and that level's
// own model_type), its experts, and the architectures that may name it.
struct ModelTypeSpec {
  std::string modelType;
  bool nestedTextConfig = false;
  // text_config.model_type when nested: the first is transformers' own, any other a spelling
  // published files use that transformers maps onto it (Kimi K2.5's "kimi_k2").
  std::vector<std::string> textModelTypes;
  MoeFields moe = MoeFields::None;
  std::vector<std::string> architectures;
};

struct FamilyModule {
  TargetFamily family;
  std::string name;  // for messages and `info`: "Qwen3.5"
  std::vector<ModelTypeSpec> modelTypes;
  FamilyTraits traits;
  GeometryDefaults geometry;  // hasDenseMlp is the model type's (Qwen3.5-MoE has no dense MLP)
  // The family's own fields after the geometry: layer_types and its attention, MLP specifics.
  void (*readLayers)(const ConfigObject& level, TargetConfig& c);
  // Rope defaults of the config class where the file is silent.
  std::optional<double> defaultPartialRotaryFactor;
  std::optional<double> defaultTheta;
  // The whole rope when the file has neither rope_scaling nor rope_parameters (gpt-oss).
  RopeConfig (*ropeWhenAbsent)(double theta) = nullptr;
  // A family whose layer types each have their own rope reads them itself (Gemma 4).
  void (*readRopes)(const ConfigObject& level, TargetConfig& c) = nullptr;
  bool tiesWordEmbeddingsByDefault = false;  // the config class's tie_word_embeddings default
  // quantization_config methods the engine dequantises for this family.
  std::vector<std::string> quantizationMethods;
  // A field of the family's own that stands in for a flat partial_rotary_factor when the file
  // has none (MiniMax-M2's rotary_dim); nullopt when absent.
  std::optional<double> (*partialRotaryFactorField)(const ConfigObject& level, const TargetConfig& c) = nullptr;
};

const FamilyModule& qwen3Family();
const FamilyModule& qwen3_5Family();
const FamilyModule& qwen3NextFamily();
const FamilyModule& llamaFamily();
const FamilyModule& gptOssFamily();
const FamilyModule& miniMaxM2Family();
const FamilyModule& glm4MoeFamily();
const FamilyModule& gemma4Family();
const FamilyModule& deepseekV3Family();
const FamilyModule& glmMoeDsaFamily();

// Every family, in the order messages list them.
const std::vector<const FamilyModule*>& familyModules();
const FamilyModule& familyModule(TargetFamily family);

}  // namespace dfi::modelspec::detail
