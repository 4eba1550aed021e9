#include "models/decoder_layer.h"

#include <string>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/weight_loader.h"
#include "models/model_cache.h"

namespace dfi::engine {
namespace {

using tensorfile::LayerType;
using tensorfile::TargetConfig;

std::variant<DenseMlp, SparseMoeMlp> mlpOf(const WeightLoader& weights, const TargetConfig& config, int index,
                                            at::Device device) {
  const std::string prefix = "model.layers." + std::to_string(index) + ".mlp.";
  if (config.moe && config.moe->moeLayer(index))
    return SparseMoeMlp(weights, prefix, *config.moe, config.hiddenSize, device);
  return DenseMlp(weights, prefix, config.hiddenSize, config.intermediateSize, device);
}

}  // namespace

NormKind normKindOf(const TargetConfig& config) {
  return config.family == tensorfile::TargetFamily::Qwen3 ? NormKind::Qwen3 : NormKind::ZeroCentred;
}

DecoderLayer::DecoderLayer(const WeightLoader& weights, const TargetConfig& config, int index, at::Device device)
    : index_(index),
      device_(device),
      norm_(normKindOf(config)),
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
  } else if (type == LayerType::FullAttention) {
    attention_.emplace(weights, prefix + "self_attn.",
                       AttentionDims{.hiddenSize = config.hiddenSize,
                                     .numHeads = config.numAttentionHeads,
                                     .numKvHeads = config.numKeyValueHeads,
                                     .headDim = config.headDim,
                                     .outputGate = config.attnOutputGate,
                                     .bias = config.attentionBias,
                                     .norm = norm_,
                                     .eps = config.rmsNormEps},
                       device);
  } else {
    throw ValidationError("layer " + std::to_string(index) + " uses sliding-window attention, which target "
                          "models do not support here",
                          {.item = "layer_types[" + std::to_string(index) + "]"});
  }
  inputNorm_ = weights.load(prefix + "input_layernorm.weight", {h}, device);
  postNorm_ = weights.load(prefix + "post_attention_layernorm.weight", {h}, device);
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
