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
  switch (config.family) {
    case tensorfile::TargetFamily::Qwen3:
    case tensorfile::TargetFamily::Llama: return NormKind::Qwen3;
    case tensorfile::TargetFamily::GptOss: return NormKind::Fp32Weight;
    case tensorfile::TargetFamily::Qwen3_5:
    case tensorfile::TargetFamily::Qwen3Next: break;
  }
  return NormKind::ZeroCentred;
}

WeightLoader normWeightLoader(const WeightLoader& weights, NormKind kind) {
  // gpt-oss keeps its norms in fp32 (_keep_in_fp32_modules) whatever the compute dtype.
  return kind == NormKind::Fp32Weight ? weights.withDtype(at::kFloat) : weights;
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
  } else {
    const bool sliding = type == LayerType::SlidingAttention;
    if (sliding && !config.slidingWindow)
      throw ValidationError("layer " + std::to_string(index) + " is a sliding_attention layer but the config "
                            "sets no sliding window",
                            {.item = "sliding_window"});
    const bool qwenFamily = config.family != tensorfile::TargetFamily::Llama &&
                            config.family != tensorfile::TargetFamily::GptOss;
    attention_.emplace(weights, prefix + "self_attn.",
                       AttentionDims{.hiddenSize = config.hiddenSize,
                                     .numHeads = config.numAttentionHeads,
                                     .numKvHeads = config.numKeyValueHeads,
                                     .headDim = config.headDim,
                                     .outputGate = config.attnOutputGate,
                                     .bias = config.attentionBias,
                                     .qkNorm = qwenFamily,
                                     .sinks = config.attentionSinks,
                                     .slidingWindow = sliding ? *config.slidingWindow : 0,
                                     .norm = norm_,
                                     .eps = config.rmsNormEps},
                       device);
  }
  const WeightLoader normWeights = normWeightLoader(weights, norm_);
  inputNorm_ = normWeights.load(prefix + "input_layernorm.weight", {h}, device);
  postNorm_ = normWeights.load(prefix + "post_attention_layernorm.weight", {h}, device);
  if (config.family == tensorfile::TargetFamily::GptOss) {
    gptOssMlp_.emplace(weights, config, index, device);
    return;
  }
  if (hasSparseMlp(config, index))
    throw ValidationError("layer " + std::to_string(index) + " has a mixture-of-experts MLP; only dense "
                          "MLP layers are supported",
                          {.item = "num_experts"});
  // gate and up as one [2 inter, h] product: one GEMM instead of two.
  gateUpProj_ = at::cat({weights.load(prefix + "mlp.gate_proj.weight", {inter, h}, device),
                         weights.load(prefix + "mlp.up_proj.weight", {inter, h}, device)});
  downProj_ = weights.load(prefix + "mlp.down_proj.weight", {h, inter}, device);
  if (config.mlpBias) {
    gateUpBias_ = at::cat({weights.load(prefix + "mlp.gate_proj.bias", {inter}, device),
                           weights.load(prefix + "mlp.up_proj.bias", {inter}, device)});
    downBias_ = weights.load(prefix + "mlp.down_proj.bias", {h}, device);
  }
}

at::Tensor DecoderLayer::forward(const at::Tensor& x, const RotaryAngles& angles, ModelCache* cache,
                                 bool rewindable) const {
  const at::Tensor normed = rmsNorm(norm_, x, inputNorm_, eps_);
  const at::Tensor mixed = linear_ ? linear_->forward(normed, cache ? &cache->linear(index_) : nullptr, rewindable)
                                   : attention_->forward(normed, angles, cache ? &cache->attention(index_) : nullptr);
  const at::Tensor h = x + mixed;
  const at::Tensor m = rmsNorm(norm_, h, postNorm_, eps_);
  if (gptOssMlp_) return h + gptOssMlp_->forward(m, nullptr);
  const at::Tensor gateUp = project(m, gateUpProj_, gateUpBias_);
  const int64_t inter = gateUpProj_.size(0) / 2;
  return h + project(at::silu(gateUp.narrow(-1, 0, inter)) * gateUp.narrow(-1, inter, inter), downProj_, downBias_);
}

}  // namespace dfi::engine
