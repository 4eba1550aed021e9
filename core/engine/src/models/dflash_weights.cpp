#include "models/dflash_weights.h"

#include <map>
#include <set>

#include "dfi/base/log_text.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

std::string layerName(int layer, const char* suffix) {
  return "layers." + std::to_string(layer) + "." + suffix;
}

// A reduced vocabulary's tensors: loadDraftVocabulary reads them (d2t and t2d are not floats).
bool isVocabularyTensor(const modelspec::DrafterConfig& config, const std::string& name) {
  return config.draftVocabSize && (name == "lm_head.weight" || name == "d2t" || name == "t2d");
}

}  // namespace

DrafterWeights loadDrafterWeights(const std::filesystem::path& dir,
                                  const modelspec::DrafterConfig& config, int targetHiddenSize,
                                  at::ScalarType dtype, at::Device device) {
  return loadDrafterWeights(tensorfile::Checkpoint::open(dir, tensorfile::NameMapping::dflashDrafter()), config,
                            targetHiddenSize, dtype, device);
}

DrafterWeights loadDrafterWeights(tensorfile::Checkpoint opened, const modelspec::DrafterConfig& config,
                                  int targetHiddenSize, at::ScalarType dtype, at::Device device) {
  const std::filesystem::path dir = opened.path();  // a copy: `opened` moves below
  for (const modelspec::DrafterConfigWarning& w : config.warnings)
    logText("engine", LogLevel::Warn, (dir / "config.json").string() + ": " + w.field + ": " + w.message);
  auto checkpoint = std::make_shared<const tensorfile::Checkpoint>(std::move(opened));
  const WeightLoader loader(*checkpoint, dtype);
  const std::vector<modelspec::ExpectedTensor> expected = modelspec::expectedDrafterTensors(config, targetHiddenSize);
  std::map<std::string, at::Tensor> loaded;
  for (const modelspec::ExpectedTensor& t : expected)
    if (!isVocabularyTensor(config, t.name)) loaded[t.name] = loader.load(t.name, t.shape, device);

  // An embedding, or an LM head with the full vocabulary, is not part of the DFlash forward; say so
  // rather than silently running something other than what the checkpoint's authors trained.
  std::set<std::string> known;
  for (const modelspec::ExpectedTensor& t : expected) known.insert(t.name);
  for (const std::string& name : checkpoint->names())
    if (!known.contains(name))
      logText("engine", LogLevel::Warn, dir.string() + ": tensor " + name + " is not used by the DFlash drafter");

  auto take = [&loaded](const std::string& name) {
    auto it = loaded.find(name);
    return it == loaded.end() ? at::Tensor() : it->second;
  };
  DrafterWeights w{.source = checkpoint,
                   .fc = take("fc.weight"),
                   .hiddenNorm = take("hidden_norm.weight"),
                   .layers = {},
                   .norm = take("norm.weight")};
  for (int i = 0; i < config.numHiddenLayers; ++i) {
    w.layers.push_back({
        .inputLayernorm = take(layerName(i, "input_layernorm.weight")),
        .qProj = take(layerName(i, "self_attn.q_proj.weight")),
        .kProj = take(layerName(i, "self_attn.k_proj.weight")),
        .vProj = take(layerName(i, "self_attn.v_proj.weight")),
        .oProj = take(layerName(i, "self_attn.o_proj.weight")),
        .qBias = take(layerName(i, "self_attn.q_proj.bias")),
        .kBias = take(layerName(i, "self_attn.k_proj.bias")),
        .vBias = take(layerName(i, "self_attn.v_proj.bias")),
        .oBias = take(layerName(i, "self_attn.o_proj.bias")),
        .qNorm = take(layerName(i, "self_attn.q_norm.weight")),
        .kNorm = take(layerName(i, "self_attn.k_norm.weight")),
        .postAttentionLayernorm = take(layerName(i, "post_attention_layernorm.weight")),
        .gateProj = take(layerName(i, "mlp.gate_proj.weight")),
        .upProj = take(layerName(i, "mlp.up_proj.weight")),
        .downProj = take(layerName(i, "mlp.down_proj.weight")),
    });
    if (config.dflash2) {
      auto conv = [&](const std::string& name) {
        return ConvWeights{take(layerName(i, (name + ".base_kernel").c_str())),
                           take(layerName(i, (name + ".kernel_projection.weight").c_str()))};
      };
      w.layers.back().attentionConv = conv("attention_conv");
      w.layers.back().mlpConv = conv("mlp_conv");
    }
  }
  if (config.dflash2)
    w.selector = SelectorWeights{take("candidate_selector.predecessor_codebook"),
                                 take("candidate_selector.successor_codebook"),
                                 take("candidate_selector.hidden_projection.weight")};
  if (config.dspark)
    w.dspark = DsparkWeights{.markovW1 = take("markov_head.markov_w1.weight"),
                             .markovW2 = take("markov_head.markov_w2.weight"),
                             .gateWeight = take("markov_head.gate_proj.weight"),
                             .gateBias = take("markov_head.gate_proj.bias"),
                             .jointWeight = take("markov_head.joint_proj.weight"),
                             .jointBias = take("markov_head.joint_proj.bias"),
                             .confidenceWeight = take("confidence_head.proj.weight"),
                             .confidenceBias = take("confidence_head.proj.bias")};
  if (config.draftVocabSize) w.vocabulary = loadDraftVocabulary(loader, config, device);
  return w;
}

}  // namespace dfi::engine
