#include "models/decoder_layer.h"

#include <string>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/weight_loader.h"
#include "kernels/tensor_cast.h"
#include "models/model_cache.h"

namespace dfi::engine {
namespace {

using modelspec::LayerType;
using modelspec::TargetConfig;

std::variant<DenseMlp, SparseMoeMlp, GptOssMlp, Gemma4FeedForward> mlpOf(const WeightLoader& weights,
                                                                          const TargetConfig& config, int index,
                                                                          at::Device device) {
  if (config.traits.mlp == modelspec::MlpKind::GptOssExperts) return GptOssMlp(weights, config, index, device);
  if (config.traits.mlp == modelspec::MlpKind::Gemma4)
    return Gemma4FeedForward(weights, "model.layers." + std::to_string(index) + ".", config, index, device);
  const std::string layer = "model.layers." + std::to_string(index) + ".";
  const std::string prefix = layer + "mlp.";
  if (config.moe && config.moe->moeLayer(index)) {
    // Checkpoints in the Mixtral layout (MiniMax-M2's) keep the sparse block under block_sparse_moe.
    const bool mixtral = weights.contains(layer + "block_sparse_moe.gate.weight");
    return SparseMoeMlp(weights, mixtral ? layer + "block_sparse_moe." : prefix, *config.moe, config.hiddenSize, device);
  }
  return DenseMlp(weights, prefix, config.hiddenSize, config.intermediateSize, device, config.mlpBias);
}

// GLM-5's indexer on a layer that runs its own ("full"); nullopt elsewhere.
std::optional<SparseIndexerDims> indexerOf(const TargetConfig& config, int index) {
  if (!config.sparseIndexer || !config.sparseIndexer->ownIndexer.at(index)) return std::nullopt;
  return SparseIndexerDims{.hiddenSize = config.hiddenSize,
                           .queryRank = config.latentAttention->qLoraRank,
                           .numHeads = config.sparseIndexer->numHeads,
                           .headDim = config.sparseIndexer->headDim,
                           .ropeDim = config.latentAttention->qkRopeHeadDim,
                           .topk = config.sparseIndexer->topk};
}

}  // namespace

WeightLoader normWeightLoader(const WeightLoader& weights, NormKind kind) {
  // gpt-oss keeps its norms in fp32 (_keep_in_fp32_modules) whatever the compute dtype.
  return kind == NormKind::Fp32Weight ? weights.withDtype(at::kFloat) : weights;
}

DecoderLayer::DecoderLayer(const WeightLoader& weights, const TargetConfig& config, int index, at::Device device)
    : index_(index),
      kvSource_(config.kvSourceLayer(index)),
      device_(device),
      norm_(config.traits.norm),
      eps_(config.rmsNormEps),
      sandwichNorms_(config.traits.sandwichNorms),
      mlp_(mlpOf(weights, config, index, device)) {
  const std::string prefix = "model.layers." + std::to_string(index) + ".";
  const int64_t h = config.hiddenSize;
  const LayerType type = config.layerTypes.at(index);
  if (type == LayerType::LinearAttention) {
    linear_.emplace(weights, prefix + "linear_attn.",
                    GatedDeltaNetDims{.hiddenSize = config.hiddenSize,
                                      .numKeyHeads = config.linearNumKeyHeads,
                                      .numValueHeads = config.linearNumValueHeads,
                                      .keyHeadDim = config.linearKeyHeadDim,
                                      .valueHeadDim = config.linearValueHeadDim,
                                      .convKernel = config.linearConvKernelDim,
                                      .eps = config.rmsNormEps},
                    device);
  } else if (config.latentAttention) {
    latentAttention_.emplace(weights, prefix + "self_attn.",
                             LatentAttentionDims{.hiddenSize = config.hiddenSize,
                                                 .numHeads = config.numAttentionHeads,
                                                 .shape = *config.latentAttention,
                                                 .bias = config.attentionBias,
                                                 .indexer = indexerOf(config, index),
                                                 .sparse = config.sparseIndexer.has_value()},
                             latentAttentionScale(config.ropeOf(index), config.latentAttention->qkHeadDim()), device);
  } else {
    const bool sliding = type == LayerType::SlidingAttention;
    if (sliding && !config.slidingWindow)
      throw ValidationError("layer " + std::to_string(index) + " is a sliding_attention layer but the config "
                            "sets no sliding window",
                            {.item = "sliding_window"});
    const modelspec::AttentionShape shape = config.attentionShape(index);
    attention_.emplace(weights, prefix + "self_attn.",
                       AttentionDims{.hiddenSize = config.hiddenSize,
                                     .numHeads = config.numAttentionHeads,
                                     .numKvHeads = shape.numKeyValueHeads,
                                     .headDim = shape.headDim,
                                     .outputGate = config.attnOutputGate,
                                     .bias = config.attentionBias,
                                     .outputBias = config.traits.attentionBiasOnOutput,
                                     .qkNorm = config.traits.qkNorm,
                                     .qkNormAcrossHeads = config.traits.qkNormAcrossHeads,
                                     .sinks = config.attentionSinks,
                                     .slidingWindow = sliding ? *config.slidingWindow : 0,
                                     .norm = norm_,
                                     .eps = config.rmsNormEps,
                                     .unitScale = config.traits.unitAttentionScale,
                                     .valueNorm = config.traits.valueNorm,
                                     .valueIsKey = config.attentionKEqV && !sliding,
                                     .sharedKv = kvSource_ != index},
                       device);
  }
  const WeightLoader normWeights = normWeightLoader(weights, norm_);
  inputNorm_ = normWeights.load(prefix + "input_layernorm.weight", {h}, device);
  postNorm_ = normWeights.load(prefix + "post_attention_layernorm.weight", {h}, device);
  if (config.perLayerInputs) perLayerInput_.emplace(weights, prefix, config, device);
  // Gemma4TextDecoderLayer's layer_scalar: a saved buffer that multiplies the layer's output.
  if (config.family == modelspec::TargetFamily::Gemma4) layerScalar_ = weights.load(prefix + "layer_scalar", {1}, device);
}

bool DecoderLayer::hasExperts() const {
  if (const auto* gemma = std::get_if<Gemma4FeedForward>(&mlp_)) return gemma->hasExperts();
  return !std::holds_alternative<DenseMlp>(mlp_);
}

at::Tensor DecoderLayer::feedForward(const at::Tensor& h, ExpertRouting* routing) const {
  // Gemma 4's block norms its own input; every other kind takes post_attention_layernorm(h).
  const bool normsItsInput = std::holds_alternative<Gemma4FeedForward>(mlp_);
  const at::Tensor input = normsItsInput ? h : rmsNorm(norm_, h, postNorm_, eps_);
  return std::visit([&](const auto& mlp) { return mlp.forward(input, routing); }, mlp_);
}

at::Tensor DecoderLayer::forward(const at::Tensor& x, const RotaryAngles& angles, ModelCache* cache,
                                 bool rewindable, ExpertRouting* routing, const at::Tensor& perLayerInput,
                                 at::Tensor* keySelection) const {
  const at::Tensor normed = rmsNorm(norm_, x, inputNorm_, eps_);
  KvCache* kv = cache && !linear_ ? &cache->attention(kvSource_) : nullptr;
  const at::Tensor mixed = linear_ ? linear_->forward(normed, cache ? &cache->linear(index_) : nullptr, rewindable)
                           : latentAttention_ ? latentAttention_->forward(normed, angles, kv,
                                                                          cache ? &cache->indexerKeys(index_) : nullptr,
                                                                          keySelection)
                                              : attention_->forward(normed, angles, kv);
  const at::Tensor h = x + (sandwichNorms_ ? rmsNorm(norm_, mixed, postNorm_, eps_) : mixed);
  at::Tensor y = h + feedForward(h, routing);
  if (perLayerInput_) y = perLayerInput_->forward(y, onDevice(perLayerInput, device_));
  return layerScalar_.defined() ? y * layerScalar_ : y;
}

}  // namespace dfi::engine
