// Sampled speculative decoding against z-lab's published `dflash` package (0.1.0,
// tests/oracle/gen_sampling.py): with the same logits, the engine's probability rule equals the
// package's _sampling_probs; with the same drafts and uniforms, every acceptance decision, the
// per-slot p and q, and the distribution the step's last token is drawn from (residual or
// bonus) equal its _rejection_sample's, exactly. The token draws (inverse CDF from a seeded
// stream) are checked here for what they must guarantee; their distribution against the
// package's loop is tests/oracle/check_sampling_distribution.py's.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "evaluation/live/speculative_sampling.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

const std::filesystem::path kDir = std::filesystem::path(DFI_BINARY_DIR) / "tests/oracle/sampling";

using test::maxAbsDiff;
using test::referenceTensor;

template <typename T>
std::vector<T> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {c.data_ptr<T>(), c.data_ptr<T>() + c.numel()};
}

TEST(SpeculativeSampling, EqualsThePackagesRuleAndRejectionSampleExactly) {
  const auto file = tensorfile::SafetensorsFile::open(kDir / "cases.safetensors");
  nlohmann::json cases;
  std::ifstream(kDir / "cases.json") >> cases;
  ASSERT_GE(cases.size(), 50u);
  int rejected = 0;
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const SamplingOptions sampling{c.at("temperature"), c.at("top_p"), c.at("top_k")};
    auto ref = [&](const char* tensor) { return referenceTensor(file, name + "." + tensor); };
    const at::Tensor targetProbs = samplingProbs(ref("target_logits"), sampling);
    const at::Tensor draftProbs = samplingProbs(ref("draft_logits"), sampling);
    EXPECT_EQ(maxAbsDiff(targetProbs, ref("target_probs")), 0.0);
    EXPECT_EQ(maxAbsDiff(draftProbs, ref("draft_probs")), 0.0);

    const auto drafts = values<std::int64_t>(ref("drafts"));
    const auto uniforms = values<float>(ref("uniforms"));
    const RejectionOutcome outcome = rejectionSample(drafts, targetProbs, draftProbs, uniforms);
    EXPECT_EQ(outcome.accepted, ref("accepted").item<std::int64_t>());
    EXPECT_EQ(maxAbsDiff(outcome.next, ref("next")), 0.0);
    ASSERT_EQ(outcome.p.size(), drafts.size());
    for (std::size_t i = 0; i < drafts.size(); ++i) {
      EXPECT_EQ(outcome.p[i], targetProbs[static_cast<std::int64_t>(i)][drafts[i]].item<float>());
      EXPECT_EQ(outcome.q[i], draftProbs[static_cast<std::int64_t>(i)][drafts[i]].item<float>());
    }
    rejected += outcome.accepted < static_cast<int>(drafts.size()) ? 1 : 0;
  }
  EXPECT_GE(rejected, 10) << "the cases must exercise the residual";
}

TEST(SpeculativeSampling, AnEmptyBlockDrawsFromTheTargetsFirstRow) {
  const at::Tensor target = at::softmax(at::randn({1, 9}), -1);
  const RejectionOutcome outcome = rejectionSample({}, target, at::empty({0, 9}), {});
  EXPECT_EQ(outcome.accepted, 0);
  EXPECT_TRUE(at::equal(outcome.next, target[0]));
}

TEST(SpeculativeSampling, InverseCdfDrawsFollowTheCumulativeMassAndSkipZeros) {
  const at::Tensor probs = at::tensor({0.0f, 0.25f, 0.0f, 0.5f, 0.25f, 0.0f}).view({1, -1});
  const std::vector<std::pair<double, std::int64_t>> expected{
      {0.0, 1}, {0.2499, 1}, {0.25, 3}, {0.7499, 3}, {0.75, 4}, {0.999999999, 4}};
  for (auto [u, token] : expected) {
    const double draw[] = {u};
    EXPECT_EQ(drawTokens(probs, draw).at(0), token) << "u = " << u;
  }
  // Rows drawn together are drawn independently, and unnormalised rows are scaled.
  const at::Tensor rows = at::tensor({0.0f, 2.0f, 0.0f, 0.0f, 0.0f, 3.0f}).view({2, 3});
  const double both[] = {0.5, 0.5};
  EXPECT_EQ(drawTokens(rows, both), (std::vector<std::int64_t>{1, 2}));
}

TEST(SpeculativeSampling, ProbabilityRuleNeedsATemperature) {
  EXPECT_THROW(samplingProbs(at::zeros({2, 4}), {}), c10::Error);
  EXPECT_THROW(validateSampling({.temperature = -1}), UsageError);
  EXPECT_THROW(validateSampling({.temperature = 1, .topP = 0}), UsageError);
  EXPECT_THROW(validateSampling({.temperature = 1, .topK = -2}), UsageError);
  EXPECT_NO_THROW(validateSampling({.temperature = 1, .topP = 1, .topK = 3}));
  EXPECT_EQ(samplingLabel({}), "greedy");
  EXPECT_EQ(samplingLabel({.temperature = 1, .topP = 0.95, .topK = 20}), "T=1 top-p=0.95 top-k=20");
}

TEST(SpeculativeSampling, StreamsAreReproducibleFromTheirSeedAndUniform) {
  SamplingStream a(responseSeed(7, 0, 3)), b(responseSeed(7, 0, 3)), other(responseSeed(7, 1, 3));
  std::set<float> seen;
  int same = 0;
  for (int i = 0; i < 4000; ++i) {
    const float u = a.acceptUniform();
    EXPECT_EQ(u, b.acceptUniform());
    same += u == other.acceptUniform() ? 1 : 0;
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    seen.insert(std::floor(u * 10));
    const double t = a.tokenUniform();
    EXPECT_EQ(t, b.tokenUniform());
    other.tokenUniform();
    ASSERT_GE(t, 0.0);
    ASSERT_LT(t, 1.0);
  }
  EXPECT_EQ(seen.size(), 10u);  // every decile
  EXPECT_LT(same, 5);           // another repeat draws other uniforms
  EXPECT_NE(responseSeed(7, 0, 3), responseSeed(7, 0, 4));
}

}  // namespace
}  // namespace dfi::engine
