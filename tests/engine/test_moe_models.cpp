// Mixture-of-experts targets against Hugging Face transformers (tests/oracle/gen_moe_models.py):
// the shared oracle suite (fp32 logits and hidden states, bf16 argmax, caches and rollback) on
// Qwen3-MoE, Qwen3.5-MoE and Qwen3-Next with experts, experts stored per expert and stacked;
// the router's choices equal transformers' own routers' (gpt-oss's too, in the engine and in
// `forward --taps`); and the DFlash live loop on a target of each of these families (and
// Qwen3-Next without experts) is lossless.

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/engine/forward_pass.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/session/hidden_statistics.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/teacher_forced/teacher_forced_pass.h"
#include "moe_routing_suite.h"
#include "target_oracle_suite.h"

namespace dfi::engine::test {
namespace {

INSTANTIATE_TEST_SUITE_P(Moe, TargetOracle,
                         ::testing::Values("moe_models/qwen3_moe", "moe_models/qwen3_moe_stacked",
                                           "moe_models/qwen35_moe_vl_layout", "moe_models/qwen35_moe_stacked",
                                           "moe_models/qwen3_next_moe"));

INSTANTIATE_TEST_SUITE_P(Moe, MoeRouting,
                         ::testing::Values("moe_models/qwen3_moe", "moe_models/qwen3_moe_stacked",
                                           "moe_models/qwen35_moe_vl_layout", "moe_models/qwen35_moe_stacked",
                                           "moe_models/qwen3_next_moe", "llama_gptoss/gpt_oss_plain",
                                           "llama_gptoss/gpt_oss_mxfp4"));

// A copy of `model` whose config.json has `field` (at the level holding the text model) set to
// `value`; the weights are the fixture's.
std::filesystem::path withConfigField(const std::string& model, const std::string& field, int value) {
  namespace fs = std::filesystem;
  const fs::path source = oracleRoot() / model;
  const fs::path dir = fs::path(DFI_BINARY_DIR) / "tmp" / ("moe_errors_" + field);
  fs::create_directories(dir);
  std::ifstream in(source / "config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  (config.contains("text_config") ? config["text_config"] : config)[field] = value;
  std::ofstream(dir / "config.json") << config.dump(2);
  fs::copy_file(source / "model.safetensors", dir / "model.safetensors", fs::copy_options::overwrite_existing);
  return dir;
}

// A config whose expert count or widths disagree with the weights: a ValidationError naming the
// checkpoint file, the tensor and both shapes, in either expert layout.
TEST(MoeErrors, ExpertCountOrWidthThatDisagreesWithTheWeightsNamesTensorAndShapes) {
  struct Case {
    std::string model, field;
    int value;
    std::string tensor, stored, implied;
  };
  const std::vector<Case> cases{
      {"moe_models/qwen3_moe_stacked", "num_local_experts", 7, "model.layers.1.mlp.gate.weight", "[6, 64]", "[7, 64]"},
      {"moe_models/qwen3_moe_stacked", "moe_intermediate_size", 24, "model.layers.1.mlp.experts.gate_up_proj",
       "[6, 64, 64]", "[6, 48, 64]"},
      {"moe_models/qwen3_moe", "moe_intermediate_size", 16, "model.layers.0.mlp.experts.0.gate_proj.weight",
       "[32, 64]", "[16, 64]"},
      {"moe_models/qwen35_moe_vl_layout", "shared_expert_intermediate_size", 40,
       "model.layers.0.mlp.shared_expert.gate_proj.weight", "[48, 64]", "[40, 64]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model + " " + c.field);
    const std::filesystem::path dir = withConfigField(c.model, c.field, c.value);
    try {
      TargetModel::load(dir, ModelOptions{});
      ADD_FAILURE() << "loaded";
    } catch (const ValidationError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find((dir / "model.safetensors").string()), std::string::npos) << message;
      for (const std::string& part : {c.tensor, c.stored, c.implied})
        EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
    }
  }
}

// `dflash-eval forward --taps` writes each tapped sparse layer's routing next to its hidden state,
// equal to transformers' routers' choice (the top-k of the router logits) and weights.
struct TappedModel {
  std::string model;
  std::vector<int> taps;
};

class MoeForwardPass : public ::testing::TestWithParam<TappedModel> {};

TEST_P(MoeForwardPass, WritesTheRoutingOfTappedSparseLayers) {
  const TappedModel& c = GetParam();
  const Reference ref = reference(c.model);
  const at::Tensor sparse = ref.get("sparse_layers");
  const std::set<int> sparseLayers(sparse.data_ptr<int64_t>(), sparse.data_ptr<int64_t>() + sparse.numel());
  const at::Tensor ids = ref.ids[0].narrow(0, 0, 130);
  ForwardPassRequest request;
  request.modelDir = oracleRoot() / c.model;
  request.ids.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  request.taps = c.taps;
  request.out = std::filesystem::path(DFI_BINARY_DIR) / "tmp" /
                ("forward_pass_" + std::filesystem::path(c.model).filename().string() + ".safetensors");
  std::filesystem::create_directories(request.out.parent_path());
  runForwardPass(request);
  const auto out = tensorfile::SafetensorsFile::open(request.out);
  std::size_t routed = 0;
  double worstWeight = 0;
  for (const int layer : c.taps) {
    const std::string id = std::to_string(layer);
    SCOPED_TRACE("layer " + id);
    if (!sparseLayers.contains(layer)) {
      EXPECT_FALSE(out.find("router." + id + ".experts"));  // a dense layer routes nothing
      EXPECT_FALSE(out.find("router." + id + ".weights"));
      continue;
    }
    ++routed;
    // A causal model's first 130 positions do not depend on the later tokens.
    EXPECT_TRUE(referenceTensor(out, "router." + id + ".experts")
                    .equal(ref.get("router." + id + ".experts").narrow(0, 0, 130)));
    const double weightDiff = maxAbsDiff(referenceTensor(out, "router." + id + ".weights"),
                                         ref.get("router." + id + ".weights").narrow(0, 0, 130));
    EXPECT_LE(weightDiff, 1e-5);
    worstWeight = std::max(worstWeight, weightDiff);
    EXPECT_EQ(out.find("router." + id + ".experts")->dtype, tensorfile::DType::I64);
    EXPECT_EQ(out.find("router." + id + ".weights")->dtype, tensorfile::DType::F32);
  }
  ASSERT_GT(routed, 0u) << "no tapped layer routes";
  EXPECT_EQ(out.tensors().size(), 3u + c.taps.size() + 2 * routed);  // ids, logits, final; taps; routing
  report(c.model, "forward --taps routing weights max abs diff (experts equal)", worstWeight);
}

INSTANTIATE_TEST_SUITE_P(Moe, MoeForwardPass,
                         ::testing::Values(TappedModel{"moe_models/qwen3_next_moe", {0, 1, 3}},  // layer 1 dense
                                           TappedModel{"moe_models/qwen3_moe", {1, 2}},          // layer 2 dense
                                           TappedModel{"llama_gptoss/gpt_oss_plain", {0, 2}},
                                           TappedModel{"llama_gptoss/gpt_oss_mxfp4", {1}}));

std::vector<std::int64_t> readIds(const tensorfile::Checkpoint& file, const std::string& name) {
  const tensorfile::TensorView view = file.tensor(name);
  const auto* data = static_cast<const std::int64_t*>(view.data());
  return {data, data + view.info().numel()};
}

// The DFlash loop on a tiny target of each MoE family (and Qwen3-Next without experts), the
// hybrid ones' Gated DeltaNet state rolled back after every partlyAccepted draft: step for step
// gen_drafter.py's reference loop run with transformers, and lossless: what it commits is the
// target's greedy continuation (transformers, full recompute).
std::filesystem::path liveDir(const std::string& name) { return oracleRoot() / "moe_models" / name; }

DFlashDrafter liveDrafter(const TargetModel& target, const std::filesystem::path& dir) {
  const modelspec::DrafterConfig config =
      modelspec::parseDrafterConfig(dir / "drafter/config.json", target.config().numHiddenLayers);
  return DFlashDrafter(config, loadDrafterWeights(dir / "drafter", config, target.config().hiddenSize, at::kFloat, at::kCPU),
                       {target.embeddingWeight(), target.lmHeadWeight()});
}

class MoeLiveLoop : public ::testing::TestWithParam<std::string> {};

TEST_P(MoeLiveLoop, LosslessAndStepForStepTheReferenceLoop) {
  const std::filesystem::path dir = liveDir(GetParam());
  const auto target = TargetModel::load(dir / "target", ModelOptions{});
  const DFlashDrafter drafter = liveDrafter(*target, dir);
  const tensorfile::Checkpoint reference =
      tensorfile::Checkpoint::open(dir / "reference.safetensors", tensorfile::NameMapping::identity());
  const int b = drafter.blockSize();
  int accepted = 0, steps = 0, partlyAccepted = 0;
  for (int i = 0; reference.contains("prompt." + std::to_string(i)); ++i) {
    const std::string n = std::to_string(i);
    const std::vector<std::int64_t> prompt = readIds(reference, "prompt." + n);
    const SpeculativeResult live =
        speculativeDecode(*target, drafter, prompt, {.maxNewTokens = 40, .counting = StepCounting::FullBlocks});
    EXPECT_EQ(live.tokens, readIds(reference, "tokens." + n)) << "prompt " << n;
    EXPECT_EQ(live.tokens, readIds(reference, "greedy." + n)) << "prompt " << n;
    const std::vector<std::int64_t> rows = readIds(reference, "steps." + n);
    const auto width = static_cast<std::size_t>(3 + b - 1);
    ASSERT_EQ(live.steps.size() * width, rows.size());
    for (std::size_t s = 0; s < live.steps.size(); ++s) {
      const auto* row = rows.data() + s * width;
      SCOPED_TRACE("prompt " + n + " step " + std::to_string(s));
      EXPECT_EQ(live.steps[s].anchorPosition, row[0]);
      EXPECT_EQ(live.steps[s].acceptedCount, row[1]);
      EXPECT_EQ(live.steps[s].bonusToken, row[2]);
      EXPECT_EQ(live.steps[s].draftTokens, std::vector<session::TokenId>(row + 3, row + width));
      accepted += live.steps[s].acceptedCount;
      partlyAccepted += live.steps[s].acceptedCount > 0 && live.steps[s].acceptedCount < b - 1;
      ++steps;
    }
  }
  ASSERT_GT(steps, 0);
  EXPECT_GT(partlyAccepted, 0) << "no step accepted a draft and rolled the rest back: the rollback path went untested";
  std::printf("%s live loop: %d steps, tau %.3f, %d partly accepted\n", GetParam().c_str(), steps,
              1.0 + static_cast<double>(accepted) / steps, partlyAccepted);
}

INSTANTIATE_TEST_SUITE_P(Moe, MoeLiveLoop,
                         ::testing::Values("live_qwen35_moe", "live_qwen3_moe", "live_qwen3_next_moe", "live_qwen3_next"));

// run --hidden-stats: each teacher-forced step records, beside its tapped layers' statistics,
// their routing over the same positions (those since the previous anchor).
TEST(MoeTeacherForced, HiddenStatisticsRecordTheTappedLayersRouting) {
  namespace hs = session::hidden_statistics;
  const auto target = TargetModel::load(liveDir("live_qwen35_moe") / "target", ModelOptions{});
  const DFlashDrafter drafter = liveDrafter(*target, liveDir("live_qwen35_moe"));
  const std::vector<std::int64_t> ids{3, 7, 1, 12, 5, 9, 9, 2, 4, 0, 11, 6, 8, 14, 2, 5, 1, 13, 10, 3};
  const std::vector<std::int64_t> anchors{4, 9, 15};
  const SequenceFeatures sequence = sequenceFeatures(*target, drafter, ids);
  const TeacherForcedPass pass = runTeacherForcedPass(sequence, drafter, anchors, analysis::MaskVariant::Reference,
                                                      {.hiddenStatistics = true});
  const std::vector<int>& taps = drafter.config().targetLayerIds;
  const ForwardOutput full =
      target->forward(at::tensor(ids, at::kLong).view({1, -1}), nullptr, {.tapLayers = taps, .routing = true});
  ASSERT_EQ(pass.statistics.size(), anchors.size());
  for (std::size_t j = 0; j < anchors.size(); ++j) {
    const std::int64_t from = j == 0 ? 0 : anchors[j - 1], count = anchors[j] - from;
    for (std::size_t i = 0; i < taps.size(); ++i) {
      ASSERT_TRUE(target->layerHasExperts(taps[i]));
      for (const auto& [name, values] : {std::pair{hs::kTargetRouterExperts, full.routing[i].experts},
                                         std::pair{hs::kTargetRouterWeights, full.routing[i].weights}}) {
        const auto it = std::find_if(pass.statistics[j].begin(), pass.statistics[j].end(), [&](const auto& r) {
          return r.name == name && r.layer == taps[i];
        });
        ASSERT_NE(it, pass.statistics[j].end()) << name << " layer " << taps[i] << " step " << j;
        const at::Tensor expected = values[0].narrow(0, from, count).to(at::kFloat).contiguous();
        EXPECT_EQ(it->values, std::vector<float>(expected.data_ptr<float>(),
                                                 expected.data_ptr<float>() + expected.numel()));
      }
    }
  }
}

}  // namespace
}  // namespace dfi::engine::test
