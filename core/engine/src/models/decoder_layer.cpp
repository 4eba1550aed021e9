#include "models/decoder_layer.h"

#include <string>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/weight_loader.h"
#include "models/model_cache.h"

namespace dfi::engine {
namespace {

using modelspec::LayerType;
using modelspec::TargetConfig;

std::variant<DenseMlp, SparseMoeMlp, GptOssMlp> mlpOf(const WeightLoader& weights, const TargetConfig& config,
                                                       int index, at::Device device) {
  if (config.traits.mlp == modelspec::MlpKind::GptOssExperts) return GptOssMlp(weights, config, index, device);
  const std::string layer = "model.layers." + std::to_string(index) + ".";
  const std::string prefix = layer + "mlp.";
  if (config.moe && config.moe->moeLayer(index)) {
    // Checkpoints in the Mixtral layout (MiniMax-M2's) keep the sparse block under block_sparse_moe.
    const bool mixtral = weights.contains(layer + "block_sparse_moe.gate.weight");
    return SparseMoeMlp(weights, mixtral ? layer + "block_sparse_moe." : prefix, *config.moe, config.hiddenSize, device);
  }
  return DenseMlp(weights, prefix, config.hiddenSize, config.intermediateSize, device, config.mlpBias);
}

}  // namespace

WeightLoader normWeightLoader(const WeightLoader& weights, NormKind kind) {
  // gpt-oss keeps its norms in fp32 (_keep_in_fp32_modules) whatever the compute dtype.
  return kind == NormKind::Fp32Weight ? weights.withDtype(at::kFloat) : weights;
}

DecoderLayer::DecoderLayer(const WeightLoader& weights, const TargetConfig& config, int index, at::Device device)
    : index_(index),
      device_(device),
      norm_(config.traits.norm),
      eps_(config.rmsNormEps),
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
  } else {
    const bool sliding = type == LayerType::SlidingAttention;
    if (sliding && !config.slidingWindow)
      throw ValidationError("layer " + std::to_string(index) + " is a sliding_attention layer but the config "
                            "sets no sliding window",
                            {.item = "sliding_window"});
    attention_.emplace(weights, prefix + "self_attn.",
                       AttentionDims{.hiddenSize = config.hiddenSize,
                                     .numHeads = config.numAttentionHeads,
                                     .numKvHeads = config.numKeyValueHeads,
                                     .headDim = config.headDim,
                                     .outputGate = config.attnOutputGate,
                                     .bias = config.attentionBias,
                                     .outputBias = config.traits.attentionBiasOnOutput,
                                     .qkNorm = config.traits.qkNorm,
                                     .qkNormAcrossHeads = config.traits.qkNormAcrossHeads,
                                     .sinks = config.attentionSinks,
                                     .slidingWindow = sliding ? *config.slidingWindow : 0,
                                     .norm = norm_,
                                     .eps = config.rmsNormEps},
                       device);
  }
  const WeightLoader normWeights = normWeightLoader(weights, norm_);
  inputNorm_ = normWeights.load(prefix + "input_layernorm.weight", {h}, device);
  postNorm_ = normWeights.load(prefix + "post_attention_layernorm.weight", {h}, device);
}

at::Tensor DecoderLayer::forward(const at::Tensor& x, const RotaryAngles& angles, ModelCache* cache,
                                 bool rewindable, ExpertRouting* routing) const {
  const at::Tensor normed = rmsNorm(norm_, x, inputNorm_, eps_);
  const at::Tensor mixed = linear_ ? linear_->forward(normed, cache ? &cache->linear(index_) : nullptr, rewindable)
                                   : attention_->forward(normed, angles, cache ? &cache->attention(index_) : nullptr);
  const at::Tensor h = x + mixed;
  const at::Tensor m = rmsNorm(norm_, h, postNorm_, eps_);
  return h + std::visit([&](const auto& mlp) { return mlp.forward(m, routing); }, mlp_);
}

}  // namespace dfi::engine
