// Gemma 4 targets against transformers (tests/oracle/gen_gemma4_models.py): every test of the
// target oracle suite (fp32 logits and hidden states, bf16 argmax, cached decode against
// transformers' own and a full recompute, verification rollback) over models with sliding and
// full layers of their own rope and head width, per-layer inputs, KV-shared layers, k_eq_v,
// soft-capping, the experts beside the dense MLP and the multimodal checkpoint layout; then the
// routers' choices, and the published 31B and 26B-A4B configs read and planned as transformers
// defines them.

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "dfi/engine/memory_plan.h"
#include "dfi/modelspec/config_error.h"
#include "dfi/tensorfile/checkpoint.h"
#include "target_oracle_suite.h"

namespace dfi::engine::test {
namespace {

INSTANTIATE_TEST_SUITE_P(Gemma4, TargetOracle,
                         ::testing::Values("gemma4/gemma4_ple_shared", "gemma4/gemma4_k_eq_v", "gemma4/gemma4_moe",
                                           "gemma4/gemma4_vl_layout"));

nlohmann::json readJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing oracle file " + path.string());
  return nlohmann::json::parse(in);
}

// Per layer and position the experts transformers' Gemma4TextRouter chose, in its order, with
// its weights (after the renormalisation and per_expert_scale), in a full forward and in
// cached one-token steps.
TEST(Gemma4Moe, RoutersChooseAsTransformers) {
  const Reference ref = reference("gemma4/gemma4_moe");
  const auto model = loadModel("gemma4/gemma4_moe");
  const at::Tensor sparse = ref.get("sparse_layers");
  ASSERT_EQ(sparse.numel(), model->numLayers());  // enable_moe_block: every layer has experts
  const std::vector<int> layers = allLayers(*model);
  const ForwardOutput out = model->forward(ref.ids, nullptr, {.tapLayers = layers, .routing = true, .logits = false});
  double worstWeight = 0;
  for (int layer : layers) {
    SCOPED_TRACE("layer " + std::to_string(layer));
    ASSERT_TRUE(model->layerHasExperts(layer));
    const at::Tensor theirs = ref.get("router." + std::to_string(layer) + ".experts");
    const ExpertRouting& ours = out.routing[static_cast<size_t>(layer)];
    ASSERT_EQ(ours.experts.sizes(), (at::IntArrayRef{1, ref.ids.size(1), theirs.size(1)}));
    EXPECT_TRUE(ours.experts[0].equal(theirs))
        << "positions routed differently: " << ours.experts[0].ne(theirs).any(-1).sum().item<int64_t>();
    const double weightDiff = maxAbsDiff(ours.weights[0], ref.get("router." + std::to_string(layer) + ".weights"));
    EXPECT_LE(weightDiff, 1e-4);
    worstWeight = std::max(worstWeight, weightDiff);
  }
  report("gemma4_moe", "router weights max abs diff", worstWeight);

  ModelCache cache = model->newCache();
  model->forward(ref.ids.narrow(1, 0, 300), &cache);
  for (int64_t t = 300; t < 304; ++t) {
    const ForwardOutput step =
        model->forward(ref.ids.narrow(1, t, 1), &cache, {.tapLayers = layers, .routing = true, .logits = false});
    for (int layer : layers)
      EXPECT_TRUE(step.routing[static_cast<size_t>(layer)].experts[0][0].equal(
          ref.get("router." + std::to_string(layer) + ".experts")[t]))
          << "layer " << layer << " position " << t;
  }
}

TEST(Gemma4Config, SavedConfigsReadAsTransformersWroteThem) {
  using modelspec::LayerType;
  const modelspec::TargetConfig shared = modelspec::parseTargetConfig(oracleRoot() / "gemma4/gemma4_ple_shared/config.json");
  EXPECT_EQ(shared.family, modelspec::TargetFamily::Gemma4);
  ASSERT_TRUE(shared.perLayerInputs);
  EXPECT_EQ(shared.perLayerInputs->hiddenSize, 8);
  EXPECT_EQ(shared.numKvSharedLayers, 2);
  // Layers 4 (sliding) and 5 (full) read the last unshared layer of their type: 3 and 2.
  EXPECT_EQ(shared.kvSourceLayer(4), 3);
  EXPECT_EQ(shared.kvSourceLayer(5), 2);
  EXPECT_EQ(shared.mlpIntermediateSize(5), 2 * shared.intermediateSize);  // use_double_wide_mlp
  EXPECT_EQ(shared.attentionShape(2), (modelspec::AttentionShape{32, 2}));  // per_layer_config
  EXPECT_EQ(shared.attentionShape(1), (modelspec::AttentionShape{16, 2}));
  EXPECT_EQ(shared.rope.type, "proportional");
  ASSERT_TRUE(shared.slidingRope);
  EXPECT_EQ(shared.slidingRope->type, "default");
  EXPECT_FALSE(shared.tieWordEmbeddings);

  const modelspec::TargetConfig keqv = modelspec::parseTargetConfig(oracleRoot() / "gemma4/gemma4_k_eq_v/config.json");
  EXPECT_TRUE(keqv.attentionKEqV);
  EXPECT_EQ(keqv.attentionShape(5), (modelspec::AttentionShape{32, 1}));
  EXPECT_EQ(keqv.finalLogitSoftcapping, 30.0);
  EXPECT_TRUE(keqv.tieWordEmbeddings);
  EXPECT_FALSE(keqv.perLayerInputs);

  const modelspec::TargetConfig vl = modelspec::parseTargetConfig(oracleRoot() / "gemma4/gemma4_vl_layout/config.json");
  EXPECT_EQ(vl.modelType, "gemma4");
  EXPECT_EQ(vl.textConfigPath, "text_config");
  EXPECT_EQ(vl.layerTypes.back(), LayerType::FullAttention);
}

TEST(Gemma4Config, BidirectionalAttentionAndOtherActivationsAreRefusedByName) {
  const std::string base = R"({"model_type": "gemma4_text", "num_hidden_layers": 2, "hidden_size": 64,
      "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10, )";
  for (const auto& [extra, field] : std::vector<std::pair<std::string, std::string>>{
           {R"("use_bidirectional_attention": "all"})", "use_bidirectional_attention"},
           {R"("hidden_activation": "silu"})", "hidden_activation"},
           {R"("num_kv_shared_layers": 2})", "num_kv_shared_layers"}}) {
    try {
      modelspec::parseTargetConfigText(base + extra, "config.json");
      ADD_FAILURE() << extra << " was accepted";
    } catch (const modelspec::ConfigValidationError& e) {
      ASSERT_FALSE(e.problems().empty()) << e.what();
      EXPECT_EQ(e.problems()[0].field, field) << e.what();
    }
  }
}

// A config whose full-layer head width disagrees with the weights: the error names the
// checkpoint file, the tensor and both shapes.
TEST(Gemma4Config, HeadWidthThatDisagreesWithTheWeightsNamesTensorAndShapes) {
  const std::filesystem::path dir = oracleRoot() / "gemma4/gemma4_k_eq_v";
  modelspec::TargetConfig config = modelspec::parseTargetConfig(dir / "config.json");
  config.layerAttention[2].headDim = 64;  // global_head_dim is 32
  try {
    TargetModel(tensorfile::Checkpoint::open(dir), config, ModelOptions{.devices = {"cpu"}, .dtype = "fp32"});
    ADD_FAILURE() << "a wrong head width was accepted";
  } catch (const ValidationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model.layers.2.self_attn.q_proj.weight"), std::string::npos) << what;
    EXPECT_NE(what.find("[256, 64]"), std::string::npos) << what;
    EXPECT_NE(what.find("[128, 64]"), std::string::npos) << what;
    EXPECT_NE(what.find("model.safetensors"), std::string::npos) << what;
  }
}

class PublishedGemma4 : public ::testing::TestWithParam<std::string> {};

// Google's config.json of each size: what transformers' config class derives per layer (layer
// types, head widths, key/value heads, KV sharing, each type's inv_freq) and, from a
// header-only checkpoint of transformers' own tensors, the parameters `info` plans: equal to
// transformers' counts (plus the saved layer_scalar buffers) and within 1% of the published size.
TEST_P(PublishedGemma4, ParsesAndPlansAsTransformersCountsIt) {
  const std::filesystem::path dir = oracleRoot() / "gemma4/published" / GetParam();
  const nlohmann::json expected = readJson(dir / "expected.json");
  const modelspec::TargetConfig config = modelspec::parseTargetConfig(dir / "config.json");
  ASSERT_EQ(config.numHiddenLayers, static_cast<int>(expected["layer_types"].size()));
  for (int i = 0; i < config.numHiddenLayers; ++i) {
    SCOPED_TRACE("layer " + std::to_string(i));
    EXPECT_EQ(modelspec::layerTypeName(config.layerTypes[i]), expected["layer_types"][i].get<std::string>());
    EXPECT_EQ(config.attentionShape(i).headDim, expected["head_dim"][i].get<int>());
    EXPECT_EQ(config.attentionShape(i).numKeyValueHeads, expected["num_key_value_heads"][i].get<int>());
    EXPECT_EQ(config.kvSourceLayer(i) != i, expected["kv_sharing_modes"][i] == "reuse");
    const auto theirs = expected["inv_freq"][expected["layer_types"][i].get<std::string>()].get<std::vector<double>>();
    const std::vector<double> ours = modelspec::ropeInverseFrequencies(config.ropeOf(i), config.attentionShape(i).headDim,
                                                                       config.maxPositionEmbeddings);
    ASSERT_EQ(ours.size(), theirs.size());
    for (std::size_t j = 0; j < ours.size(); ++j) EXPECT_NEAR(ours[j], theirs[j], 2e-6 * theirs[j]) << "inv_freq " << j;
  }
  const MemoryPlan plan = planTargetMemory(tensorfile::Checkpoint::open(dir), config,
                                           ModelOptions{.devices = {"cpu"}, .dtype = "bf16"});
  // transformers counts parameters; the plan counts every stored tensor, its saved buffers
  // (each layer's layer_scalar) too.
  const nlohmann::json transformers = readJson(dir / "parameters.json");
  const auto buffers = transformers["stored_buffers"].get<std::uint64_t>();
  EXPECT_EQ(buffers, static_cast<std::uint64_t>(config.numHiddenLayers));
  EXPECT_EQ(plan.totalParameters, transformers["total"].get<std::uint64_t>() + buffers);
  EXPECT_EQ(plan.activeParameters, transformers["active"].get<std::uint64_t>() + buffers);
  const double published = expected["published_total"].get<double>();
  const double publishedActive = expected["published_active"].get<double>();
  EXPECT_NEAR(static_cast<double>(plan.totalParameters) / published, 1.0, 0.01);
  EXPECT_NEAR(static_cast<double>(plan.activeParameters) / publishedActive, 1.0, 0.01);
  std::printf("%s: %.3fB parameters (%.3fB active), published %.1fB (%.1fB)\n", GetParam().c_str(),
              static_cast<double>(plan.totalParameters) / 1e9, static_cast<double>(plan.activeParameters) / 1e9,
              published / 1e9, publishedActive / 1e9);
}

INSTANTIATE_TEST_SUITE_P(Gemma4, PublishedGemma4, ::testing::Values("gemma_4_31b", "gemma_4_26b_a4b"));

}  // namespace
}  // namespace dfi::engine::test
