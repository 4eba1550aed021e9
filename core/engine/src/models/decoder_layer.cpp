#include "models/decoder_layer.h"

#include <algorithm>
#include <string>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/weight_loader.h"
#include "kernels/projection.h"
#include "models/model_cache.h"

namespace dfi::engine {
namespace {

using tensorfile::LayerType;
using tensorfile::TargetConfig;

bool hasSparseMlp(const TargetConfig& config, int index) {
  if (!config.moe || config.moe->numExperts <= 0) return false;
  const auto& dense = config.moe->mlpOnlyLayers;
  return std::find(dense.begin(), dense.end(), index) == dense.end() &&
         (index + 1) % std::max(1, config.moe->decoderSparseStep) == 0;
}

}  // namespace

NormKind normKindOf(const TargetConfig& config) {
  return config.family == tensorfile::TargetFamily::Qwen3 ? NormKind::Qwen3 : NormKind::ZeroCentred;
}

DecoderLayer::DecoderLayer(const WeightLoader& weights, const TargetConfig& config, int index, at::Device device)
    : index_(index), device_(device), norm_(normKindOf(config)), eps_(config.rmsNormEps) {
  const std::string prefix = "model.layers." + std::to_string(index) + ".";
  const int64_t h = config.hiddenSize, inter = config.intermediateSize;
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
  if (hasSparseMlp(config, index))
    throw ValidationError("layer " + std::to_string(index) + " has a mixture-of-experts MLP; only dense "
                          "MLP layers are supported",
                          {.item = "num_experts"});
  inputNorm_ = weights.load(prefix + "input_layernorm.weight", {h}, device);
  postNorm_ = weights.load(prefix + "post_attention_layernorm.weight", {h}, device);
  // gate and up as one [2 inter, h] product: one GEMM instead of two.
  gateUpProj_ = at::cat({weights.load(prefix + "mlp.gate_proj.weight", {inter, h}, device),
                         weights.load(prefix + "mlp.up_proj.weight", {inter, h}, device)});
  downProj_ = weights.load(prefix + "mlp.down_proj.weight", {h, inter}, device);
}

at::Tensor DecoderLayer::forward(const at::Tensor& x, const RotaryAngles& angles, ModelCache* cache,
                                 bool rewindable) const {
  const at::Tensor normed = rmsNorm(norm_, x, inputNorm_, eps_);
  const at::Tensor mixed = linear_ ? linear_->forward(normed, cache ? &cache->linear(index_) : nullptr, rewindable)
                                   : attention_->forward(normed, angles, cache ? &cache->attention(index_) : nullptr);
  const at::Tensor h = x + mixed;
  const at::Tensor m = rmsNorm(norm_, h, postNorm_, eps_);
  const at::Tensor gateUp = project(m, gateUpProj_);
  const int64_t inter = gateUpProj_.size(0) / 2;
  return h + project(at::silu(gateUp.narrow(-1, 0, inter)) * gateUp.narrow(-1, inter, inter), downProj_);
}

}  // namespace dfi::engine
