#include "models/target_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "dfi/base/error.h"
#include "dfi/engine/memory_plan.h"
#include "dfi/modelspec/parameter_count.h"
#include "evaluation/teacher_forced/hidden_stats.h"
#include "io/quantized_weights.h"
#include "io/weight_loader.h"
#include "kernels/projection.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {

std::unique_ptr<TargetModel> TargetModel::load(const std::filesystem::path& dir, const ModelOptions& options) {
  modelspec::TargetConfig config = modelspec::parseTargetConfig(dir / "config.json");
  return load(tensorfile::Checkpoint::open(dir), std::move(config), options);
}

std::unique_ptr<TargetModel> TargetModel::load(tensorfile::Checkpoint checkpoint, modelspec::TargetConfig config,
                                               const ModelOptions& options) {
  // Refused before the first byte is copied, not half-way through with an allocator error.
  requirePlanFits(planTargetMemory(checkpoint, config, options));
  return std::make_unique<TargetModel>(std::move(checkpoint), std::move(config), options);
}

TargetModel::TargetModel(tensorfile::Checkpoint checkpoint, modelspec::TargetConfig config,
                         const ModelOptions& options)
    : checkpoint_(std::move(checkpoint)),
      config_(std::move(config)),
      placement_(placeLayers(options, layersPerDevice(modelspec::countTargetParameters(checkpoint_, config_),
                                                      static_cast<int>(options.devices.size())))) {
  c10::InferenceMode inference;
  // Gemma 4's sliding and full layers each have their own rope and head width.
  std::vector<std::pair<modelspec::RopeConfig, int>> ropes;
  for (int i = 0; i < config_.numHiddenLayers; ++i) {
    const std::pair<modelspec::RopeConfig, int> rope{config_.ropeOf(i), config_.attentionShape(i).headDim};
    auto found = std::find(ropes.begin(), ropes.end(), rope);
    if (found == ropes.end()) {
      rotaries_.emplace_back(rope.first, rope.second, config_.maxPositionEmbeddings);
      found = ropes.insert(ropes.end(), rope);
    }
    rotaryOfLayer_.push_back(static_cast<int>(found - ropes.begin()));
    sharesKv_ = sharesKv_ || config_.kvSourceLayer(i) != i;
  }
  const WeightLoader weights(checkpoint_, placement_.dtype, quantizedWeightsFor(config_.quantization));
  const int64_t v = config_.vocabSize, h = config_.hiddenSize;
  embedTokens_ = weights.load("model.embed_tokens.weight", {v, h}, placement_.first);
  if (config_.traits.scaledEmbeddings)
    embedScale_ = embeddingScale(std::sqrt(static_cast<double>(h)), placement_.dtype, placement_.first);
  if (config_.perLayerInputs) perLayerInputs_.emplace(weights, config_, placement_.first);
  layers_.reserve(config_.numHiddenLayers);
  for (int i = 0; i < config_.numHiddenLayers; ++i)
    layers_.emplace_back(weights, config_, i, placement_.layerDevice[i]);
  finalNorm_ = normWeightLoader(weights, config_.traits.norm).load("model.norm.weight", {h}, placement_.last);
  // Tied models have no lm_head.weight; the embedding matrix serves (moved if on another device).
  lmHead_ = config_.tieWordEmbeddings && !weights.contains("lm_head.weight")
                ? embedTokens_.to(placement_.last)
                : weights.load("lm_head.weight", {v, h}, placement_.last);
  weights.releaseCopiedPages();
}

ModelCache TargetModel::newCache() const {
  std::vector<bool> linear;
  for (const DecoderLayer& layer : layers_) linear.push_back(layer.isLinear());
  return ModelCache(std::move(linear));
}

at::Tensor TargetModel::embed(const at::Tensor& ids) const {
  const at::Tensor embedded = at::embedding(embedTokens_, ids.to(placement_.first, at::kLong));
  return embedScale_.defined() ? embedded * embedScale_ : embedded;
}

void TargetModel::checkTokenIds(std::span<const std::int64_t> ids) const {
  const std::int64_t vocab = config_.vocabSize;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      throw UsageError("token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                           " is outside the vocabulary (0.." + std::to_string(vocab - 1) + ")",
                       {.item = "ids"});
}

at::Tensor TargetModel::lmHead(const at::Tensor& hidden) const {
  const at::Tensor logits = project(onDevice(hidden, placement_.last), lmHead_);
  if (!config_.finalLogitSoftcapping) return logits;
  // As transformers: divide, tanh, multiply, each in the logits' dtype.
  const double cap = *config_.finalLogitSoftcapping;
  return at::tanh(logits / cap) * cap;
}

ForwardOutput TargetModel::forward(const at::Tensor& ids, ModelCache* cache, const ForwardRequest& request) const {
  if (ids.dim() != 2) throw UsageError("token ids must be [batch, tokens], got " + std::to_string(ids.dim()) + " dims");
  std::map<int, size_t> tapIndex;  // layer id -> position in request.tapLayers
  for (size_t i = 0; i < request.tapLayers.size(); ++i) {
    const int layer = request.tapLayers[i];
    if (layer < 0 || layer >= numLayers())
      throw UsageError("tap layer " + std::to_string(layer) + " is outside 0.." + std::to_string(numLayers() - 1),
                       {.item = "taps"});
    tapIndex.emplace(layer, i);
  }
  c10::InferenceMode inference;
  // A KV-shared layer reads its source layer's cache, so a forward without one keeps a cache
  // of its own for the call.
  ModelCache scratch = sharesKv_ && !cache ? newCache() : ModelCache({});
  ModelCache* const kv = cache ? cache : sharesKv_ ? &scratch : nullptr;
  const int64_t start = cache ? cache->length() : 0;
  const int64_t steps = ids.size(1);

  ForwardOutput out;
  out.taps.resize(request.tapLayers.size());
  if (request.statistics) out.statistics.resize(request.tapLayers.size());
  if (request.routing) out.routing.resize(request.tapLayers.size());
  // One table per rope and device the layers live on.
  std::vector<std::tuple<int, c10::Device, RotaryAngles>> angles;
  auto anglesOf = [&](int rotary, c10::Device device) -> const RotaryAngles& {
    for (const auto& [r, d, a] : angles)
      if (r == rotary && d == device) return a;
    return std::get<2>(angles.emplace_back(rotary, device,
                                           rotaries_[rotary].angles(start, steps, placement_.dtype, device)));
  };
  at::Tensor x = embed(ids);
  at::Tensor keySelection;  // GLM-5: the last "full" sparse-attention layer's key choice
  const at::Tensor perLayerInputs = perLayerInputs_ ? perLayerInputs_->forward(ids, x) : at::Tensor();
  for (int i = 0; i < numLayers(); ++i) {
    const DecoderLayer& layer = layers_[i];
    const auto tapped = tapIndex.find(i);
    ExpertRouting* routing = request.routing && tapped != tapIndex.end() ? &out.routing[tapped->second] : nullptr;
    x = layer.forward(onDevice(x, layer.device()), anglesOf(rotaryOfLayer_[i], layer.device()), kv,
                      request.rewindable, routing, perLayerInputs.defined() ? perLayerInputs.select(2, i) : at::Tensor(),
                      &keySelection);
    if (tapped != tapIndex.end()) {
      out.taps[tapped->second] = x;  // the layer's output tensor itself, no copy
      if (request.statistics) out.statistics[tapped->second] = hiddenStatistics(x);
    }
  }
  // Duplicate tap ids share the tensor of their first occurrence.
  for (size_t i = 0; i < request.tapLayers.size(); ++i)
    if (!out.taps[i].defined()) {
      out.taps[i] = out.taps[tapIndex.at(request.tapLayers[i])];
      if (request.statistics) out.statistics[i] = out.statistics[tapIndex.at(request.tapLayers[i])];
      if (request.routing) out.routing[i] = out.routing[tapIndex.at(request.tapLayers[i])];
    }
  if (cache) cache->advance(steps, request.rewindable);
  out.finalHidden = rmsNorm(config_.traits.norm, onDevice(x, placement_.last), finalNorm_, config_.rmsNormEps);
  if (request.logits) {
    const std::int64_t keep = request.logitsToKeep > 0 ? std::min(request.logitsToKeep, steps) : steps;
    out.logits = lmHead(out.finalHidden.narrow(1, steps - keep, keep));
  }
  return out;
}

}  // namespace dfi::engine
