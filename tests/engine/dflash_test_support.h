#pragma once
// A small random DFlash drafter for engine tests: config, weights and target head built in
// C++ so the tests control every dimension (GQA, sliding layers, YaRN).

#include <ATen/ATen.h>

#include "models/dflash_drafter.h"

namespace dfi::engine::testing {

inline modelspec::DrafterConfig smallDrafterConfig() {
  modelspec::DrafterConfig c;
  c.modelType = "qwen3";
  c.hiddenSize = 32;
  c.numHiddenLayers = 3;
  c.numAttentionHeads = 4;
  c.numKeyValueHeads = 2;
  c.headDim = 8;
  c.intermediateSize = 48;
  c.vocabSize = 64;
  c.maxPositionEmbeddings = 64;
  c.blockSize = 4;
  c.targetLayerIds = {1, 3};
  c.maskTokenId = 63;
  c.rope.type = "yarn";
  c.rope.theta = 10000;
  c.rope.factor = 4;
  c.rope.originalMaxPositionEmbeddings = 16;
  c.layerTypes = {modelspec::LayerType::SlidingAttention, modelspec::LayerType::FullAttention,
                  modelspec::LayerType::SlidingAttention};
  c.slidingWindow = 5;
  return c;
}

// Weights with unit-scale activations and norm weights away from 1 (so a misplaced norm shows).
inline DrafterWeights randomDrafterWeights(const modelspec::DrafterConfig& c, int targetHidden,
                                           std::uint64_t seed) {
  at::manual_seed(seed);
  auto mat = [](std::int64_t rows, std::int64_t cols) {
    return at::randn({rows, cols}) / std::sqrt(static_cast<double>(cols));
  };
  auto norm = [](std::int64_t n) { return 1.0 + 0.2 * at::randn({n}); };
  const std::int64_t h = c.hiddenSize, q = c.numAttentionHeads * c.headDim,
                     kv = c.numKeyValueHeads * c.headDim, inter = c.intermediateSize;
  DrafterWeights w;
  w.fc = mat(h, static_cast<std::int64_t>(c.targetLayerIds.size()) * targetHidden);
  w.hiddenNorm = norm(h);
  w.norm = norm(h);
  for (int i = 0; i < c.numHiddenLayers; ++i) {
    DrafterLayerWeights l;
    l.inputLayernorm = norm(h);
    l.qProj = mat(q, h);
    l.kProj = mat(kv, h);
    l.vProj = mat(kv, h);
    l.oProj = mat(h, q);
    l.qNorm = norm(c.headDim);
    l.kNorm = norm(c.headDim);
    l.postAttentionLayernorm = norm(h);
    l.gateProj = mat(inter, h);
    l.upProj = mat(inter, h);
    l.downProj = mat(h, inter);
    w.layers.push_back(l);
  }
  return w;
}

inline TargetHead randomTargetHead(std::int64_t vocab, std::int64_t hidden, std::uint64_t seed) {
  at::manual_seed(seed);
  return {at::randn({vocab, hidden}), at::randn({vocab, hidden}) / std::sqrt(static_cast<double>(hidden))};
}

inline double maxAbsDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>();
}

}  // namespace dfi::engine::testing
