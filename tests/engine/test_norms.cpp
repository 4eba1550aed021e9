// The RMSNorm variants as one pass over raw memory (the CPU path) against each variant written
// as transformers writes it, in fp32 and bf16 (the roundings where transformers casts are what
// makes bf16 agree).

#include <string>

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "kernels/norms.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

constexpr double kEps = 1e-6;

at::Tensor normalised(const at::Tensor& x) {
  const at::Tensor x32 = x.to(at::kFloat);
  return x32 * at::rsqrt(x32.pow(2).mean(-1, true) + kEps);
}

// Largest difference in units of the dtype's rounding step at each value's magnitude.
double maxRelativeSteps(const at::Tensor& got, const at::Tensor& want, double step) {
  const at::Tensor a = got.to(at::kDouble), b = want.to(at::kDouble);
  return ((a - b).abs() / (b.abs() * step + 1e-30)).max().item<double>();
}

struct Case {
  at::ScalarType dtype;
  double step;  // one unit of rounding
};

class NormsTest : public ::testing::TestWithParam<Case> {};

TEST_P(NormsTest, MatchesTheTransformersFormulation) {
  const auto [dtype, step] = GetParam();
  at::manual_seed(5);
  // 37 columns: not a multiple of the kernel's 8 running sums; rows from a non-contiguous view.
  const at::Tensor x = (at::randn({2, 37, 6}) * 3).to(dtype).transpose(1, 2);
  const at::Tensor gate = at::randn({2, 6, 37}).to(dtype);
  const at::Tensor weight = (at::randn({37}) * 0.5 + 1).to(dtype);

  const at::Tensor qwen3 = weight * normalised(x).to(dtype);
  const at::Tensor zeroCentred = (normalised(x) * (weight.to(at::kFloat) + 1.0)).to(dtype);
  const at::Tensor gated =
      ((weight * normalised(x).to(dtype)).to(at::kFloat) * at::silu(gate.to(at::kFloat))).to(dtype);

  // fp32: within a few rounding steps (a different summation order); bf16: at most one step.
  const double allowed = dtype == at::kFloat ? 8 : 1.01;
  EXPECT_LE(maxRelativeSteps(rmsNormQwen3(x, weight, kEps), qwen3, step), allowed);
  EXPECT_LE(maxRelativeSteps(rmsNormZeroCentred(x, weight, kEps), zeroCentred, step), allowed);
  EXPECT_LE(maxRelativeSteps(rmsNormGated(x, gate, weight, kEps), gated, step), allowed);
  // GptOssRMSNorm: the weight kept in fp32 whatever x's dtype, multiplied in fp32.
  const at::Tensor weight32 = at::randn({37}) * 0.5 + 1;
  const at::Tensor fp32Weight = (weight32 * normalised(x)).to(dtype);
  EXPECT_LE(maxRelativeSteps(rmsNormFp32Weight(x, weight32, kEps), fp32Weight, step), allowed);
  EXPECT_EQ(rmsNormFp32Weight(x, weight32, kEps).scalar_type(), dtype);
  EXPECT_EQ(rmsNormQwen3(x, weight, kEps).scalar_type(), dtype);
  EXPECT_EQ(rmsNormQwen3(x, weight, kEps).sizes(), x.sizes());
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NormsTest,
                         ::testing::Values(Case{at::kFloat, 1.0 / (1 << 23)},
                                           Case{at::kBFloat16, 1.0 / (1 << 7)}),
                         [](const auto& info) {
                           return std::string(info.param.dtype == at::kFloat ? "fp32" : "bf16");
                         });

}  // namespace
}  // namespace dfi::engine
