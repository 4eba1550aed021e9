#pragma once
// The routing suite of the mixture-of-experts targets, shared by every MoE family's test
// (test_moe_models.cpp, test_minimax_glm_targets.cpp): each sparse layer's choice and weights
// equal transformers' routers' (reference.safetensors' router.<layer>.experts / .weights and
// sparse_layers, by tests/oracle/transformers_reference.py), and cached steps route as the full
// forward. A test file includes it once and instantiates MoeRouting with its fixtures.

#include <set>

#include "target_oracle_suite.h"

namespace dfi::engine::test {

class MoeRouting : public ::testing::TestWithParam<std::string> {};

// Per sparse layer and position: the same experts in the same order, the same weights.
TEST_P(MoeRouting, ChoicesAndWeightsEqualTransformersRouters) {
  const Reference ref = reference(GetParam());
  const auto model = loadModel(GetParam());
  const at::Tensor sparse = ref.get("sparse_layers");
  std::set<int> sparseLayers(sparse.data_ptr<int64_t>(), sparse.data_ptr<int64_t>() + sparse.numel());
  ASSERT_FALSE(sparseLayers.empty());
  const std::vector<int> layers = allLayers(*model);
  const ForwardOutput out = model->forward(ref.ids, nullptr, {.tapLayers = layers, .routing = true, .logits = false});
  ASSERT_EQ(out.routing.size(), layers.size());
  double worstWeight = 0;
  for (int layer : layers) {
    SCOPED_TRACE("layer " + std::to_string(layer));
    EXPECT_EQ(model->layerHasExperts(layer), sparseLayers.contains(layer));
    const ExpertRouting& routing = out.routing[static_cast<size_t>(layer)];
    if (!sparseLayers.contains(layer)) {
      EXPECT_FALSE(routing.experts.defined());
      continue;
    }
    const at::Tensor theirExperts = ref.get("router." + std::to_string(layer) + ".experts");
    const at::Tensor theirWeights = ref.get("router." + std::to_string(layer) + ".weights");
    ASSERT_EQ(routing.experts.sizes(), (at::IntArrayRef{1, ref.ids.size(1), theirExperts.size(1)}));
    ASSERT_EQ(routing.experts.scalar_type(), at::kLong);
    ASSERT_EQ(routing.weights.scalar_type(), at::kFloat);
    EXPECT_TRUE(routing.experts[0].equal(theirExperts))
        << "positions routed differently: " << routing.experts[0].ne(theirExperts).any(-1).sum().item<int64_t>();
    const double weightDiff = maxAbsDiff(routing.weights[0], theirWeights);
    EXPECT_LE(weightDiff, 1e-4);  // the tolerance of the hidden states they are computed from
    worstWeight = std::max(worstWeight, weightDiff);
  }
  report(GetParam(), "routing weights max abs diff (every sparse layer, experts equal)", worstWeight);
}

// The routing of cached steps is the routing of the same positions in a full forward.
TEST_P(MoeRouting, CachedStepsRouteAsTheFullForward) {
  const Reference ref = reference(GetParam());
  const auto model = loadModel(GetParam());
  const std::vector<int> layers = allLayers(*model);
  const int64_t prefix = 60, steps = 4;
  const ForwardOutput full = model->forward(ref.ids.narrow(1, 0, prefix + steps), nullptr,
                                            {.tapLayers = layers, .routing = true, .logits = false});
  ModelCache cache = model->newCache();
  model->forward(ref.ids.narrow(1, 0, prefix), &cache, {.logits = false});
  for (int64_t t = prefix; t < prefix + steps; ++t) {
    const ForwardOutput step =
        model->forward(ref.ids.narrow(1, t, 1), &cache, {.tapLayers = layers, .routing = true, .logits = false});
    for (int layer : layers) {
      if (!model->layerHasExperts(layer)) continue;
      EXPECT_TRUE(step.routing[layer].experts[0][0].equal(full.routing[layer].experts[0][t]))
          << "layer " << layer << " position " << t;
    }
  }
}

}  // namespace dfi::engine::test
