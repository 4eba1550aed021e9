// The engine's hidden-state statistics are dfi::analysis's definition (the one the GUI applies
// to an imported dump): the same records, bit for bit, for a tensor with NaN and Inf, in fp32
// and bf16, and forward's [..., 4] statistics are those records' first four channels.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "dfi/analysis/hidden_statistics.h"
#include "evaluation/teacher_forced/hidden_stats.h"

using namespace dfi;

namespace {

// [3, 2, 8]: random values, one NaN, +Inf and -Inf in one row, and a row with nothing finite.
at::Tensor awkwardHiddenStates() {
  at::manual_seed(7);
  at::Tensor h = at::randn({3, 2, 8}, at::kFloat) * 3 + 0.5;
  h[0][1][3] = std::numeric_limits<float>::quiet_NaN();
  h[1][0][0] = std::numeric_limits<float>::infinity();
  h[1][0][5] = -std::numeric_limits<float>::infinity();
  h[2][1].fill_(std::numeric_limits<float>::quiet_NaN());
  return h;
}

std::vector<double> hostValues(const at::Tensor& t) {
  const at::Tensor host = t.to(at::kCPU, at::kDouble).contiguous();
  return {host.data_ptr<double>(), host.data_ptr<double>() + host.numel()};
}

TEST(HiddenStats, EngineRecordsAreTheAnalysisDefinition) {
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const at::Tensor h = awkwardHiddenStates().to(dtype);
    const auto engine = engine::hiddenStatisticRecords(h, "target.tap", 2);
    const auto reference = analysis::hiddenStatisticRecords(hostValues(h), 8, "target.tap", 2);
    ASSERT_EQ(engine.size(), reference.size());
    for (std::size_t i = 0; i < engine.size(); ++i) {
      EXPECT_EQ(engine[i].name, reference[i].name);
      ASSERT_EQ(engine[i].values.size(), reference[i].values.size()) << engine[i].name;
      for (std::size_t j = 0; j < engine[i].values.size(); ++j)  // bit for bit, no NaN among them
        EXPECT_EQ(engine[i].values[j], reference[i].values[j]) << engine[i].name << "[" << j << "]";
    }
    // The policy as the engine applies it: finite values only, non-finite ones counted.
    EXPECT_EQ(engine[4].name, "target.tap.nan");
    EXPECT_EQ(engine[4].values, (std::vector<float>{0, 1, 0, 0, 0, 8}));
    EXPECT_EQ(engine[5].values, (std::vector<float>{0, 0, 2, 0, 0, 0}));
    EXPECT_TRUE(std::isfinite(engine[0].values[1]) && std::isfinite(engine[3].values[2]));
    EXPECT_EQ(engine[3].values[5], 0.0f);  // nothing finite
  }
}

TEST(HiddenStats, ForwardStatisticsAreTheRecordsChannels) {
  const at::Tensor h = awkwardHiddenStates();
  const at::Tensor stats = engine::hiddenStatistics(h);
  ASSERT_EQ(stats.sizes(), (at::IntArrayRef{3, 2, engine::kNumHiddenStats}));
  const auto records = engine::hiddenStatisticRecords(h, "target.tap");
  const at::Tensor flat = stats.reshape({-1, engine::kNumHiddenStats});
  for (int c = 0; c < engine::kNumHiddenStats; ++c)
    for (std::int64_t r = 0; r < flat.size(0); ++r)
      EXPECT_EQ(flat[r][c].item<float>(), records[static_cast<std::size_t>(c)].values[static_cast<std::size_t>(r)]);
}

}  // namespace
