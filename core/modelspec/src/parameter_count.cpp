#include "dfi/modelspec/parameter_count.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace dfi::modelspec {
namespace {

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// "model.layers.12.mlp..." -> 12.
std::optional<int> layerOf(std::string_view name) {
  constexpr std::string_view prefix = "model.layers.";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view rest = name.substr(prefix.size());
  int index = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.') return std::nullopt;
  return index;
}

// Experts under mlp. (transformers' names), block_sparse_moe. (the Mixtral layout MiniMax-M2
// checkpoints keep) or directly under the layer (Gemma 4's experts beside its dense MLP:
// layers.<i>.experts.); a shared expert is not routed.
bool isRoutedExpert(std::string_view name) {
  if (name.find(".mlp.experts.") != std::string_view::npos || name.find(".block_sparse_moe.experts.") != std::string_view::npos)
    return true;
  const std::size_t at = name.find(".experts.");
  if (at == std::string_view::npos || at == 0) return false;
  const std::size_t segment = name.rfind('.', at - 1);
  const std::string_view index = name.substr(segment + 1, at - segment - 1);
  return !index.empty() && index.find_first_not_of("0123456789") == std::string_view::npos;
}

void add(PartParameters& part, std::uint64_t parameters, bool routed) {
  part.total += parameters;
  if (routed) part.routed += parameters;
}

}  // namespace

std::uint64_t storedParameters(const tensorfile::TensorInfo& info, int packedBits) {
  const auto elements = static_cast<std::uint64_t>(info.numel());
  static constexpr std::string_view kMetadata[] = {"_scale_inv", ".weight_scale", ".weight_scale_2", ".weight_global_scale",
                                                   ".input_scale", ".input_global_scale", ".weight_zero_point",
                                                   ".weight_shape", ".activation_scale", ".qzeros", ".scales", ".g_idx"};
  for (const std::string_view suffix : kMetadata)
    if (endsWith(info.name, suffix)) return 0;
  if (info.dtype == tensorfile::DType::I32 && (endsWith(info.name, ".weight_packed") || endsWith(info.name, ".qweight")))
    return elements * 32 / static_cast<std::uint64_t>(packedBits);
  if (info.dtype != tensorfile::DType::U8) return elements;
  if (endsWith(info.name, "_blocks") || endsWith(info.name, ".weight_packed") || endsWith(info.name, ".weight"))
    return 2 * elements;
  if (endsWith(info.name, "_scales")) return 0;
  return elements;
}

// A tied head counts the embeddings once more for the device that holds it, not as parameters.
std::uint64_t TargetParameters::total() const {
  std::uint64_t sum = embeddings.total + head.total - (headIsEmbeddings ? embeddings.total : 0);
  for (const PartParameters& layer : layers) sum += layer.total;
  return sum;
}

std::uint64_t TargetParameters::active() const {
  std::uint64_t routed = 0;
  for (const PartParameters& layer : layers) routed += layer.routed;
  return total() - routed + static_cast<std::uint64_t>(std::llround(static_cast<double>(routed) * routedShare));
}

TargetParameters countTargetParameters(const tensorfile::Checkpoint& checkpoint, const TargetConfig& config) {
  TargetParameters out;
  out.layers.resize(static_cast<std::size_t>(config.numHiddenLayers));
  if (config.moe && config.moe->numExperts > 0)
    out.routedShare = static_cast<double>(config.moe->numExpertsPerToken) / config.moe->numExperts;
  // Integers packed in int32 words: compressed-tensors' num_bits (one width per checkpoint in
  // practice), GPTQ's and AWQ's bits.
  int packedBits = 4;
  if (config.quantization && !config.quantization->groups.empty()) packedBits = config.quantization->groups.front().weights.numBits;
  if (config.quantization && config.quantization->bits > 0) packedBits = config.quantization->bits;
  for (const std::string& name : checkpoint.names()) {
    const tensorfile::TensorInfo& info = checkpoint.info(name);
    const std::uint64_t parameters = storedParameters(info, packedBits);
    const std::optional<int> layer = layerOf(name);
    // The multi-token-prediction layers DeepSeek-V3 and GLM-4.5 store after the last decoder layer
    // are not part of the model transformers builds.
    if (layer && (*layer < 0 || *layer >= config.numHiddenLayers)) continue;
    if (layer) {
      add(out.layers[static_cast<std::size_t>(*layer)], parameters, isRoutedExpert(name));
    } else if (name == "model.embed_tokens.weight") {
      add(out.embeddings, parameters, false);
    } else {
      add(out.head, parameters, false);
    }
  }
  out.headIsEmbeddings = config.tieWordEmbeddings && !checkpoint.contains("lm_head.weight");
  if (out.headIsEmbeddings) add(out.head, out.embeddings.total, false);
  return out;
}

}  // namespace dfi::modelspec
