// project(): the CPU matrix-vector kernel (one row, fp32 or bf16 weights) against at::linear,
// for lengths that are not a multiple of its 32 running sums, and the shapes it hands over to
// at::linear unchanged.

#include <string>

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "projection.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

TEST(Projection, OneRowMatchesAtLinearInFp32) {
  at::manual_seed(3);
  for (const int64_t n : {1, 31, 32, 77, 768}) {
    const at::Tensor weight = at::randn({300, n}), x = at::randn({1, 1, n});
    const at::Tensor got = project(x, weight);
    EXPECT_EQ(got.sizes(), (at::IntArrayRef{1, 1, 300})) << n;
    // Summation order differs from MKL's: a few fp32 roundings of a sum of n products.
    EXPECT_LE(test::maxAbsDiff(got, at::linear(x, weight)),
              1e-5 * std::sqrt(static_cast<double>(n)))
        << n;
  }
}

TEST(Projection, OneRowInBf16RoundsOnceFromFp32Sums) {
  at::manual_seed(4);
  const at::Tensor weight = at::randn({513, 200}).to(at::kBFloat16),
                   x = at::randn({1, 200}).to(at::kBFloat16);
  const at::Tensor got = project(x, weight);
  EXPECT_EQ(got.scalar_type(), at::kBFloat16);
  const at::Tensor exact = at::linear(x.to(at::kDouble), weight.to(at::kDouble));
  // One bf16 rounding of the fp32 sum: within one bf16 step (2^-7 relative) of the exact product.
  EXPECT_LE(((got.to(at::kDouble) - exact).abs() / (exact.abs() + 1e-3)).max().item<double>(),
            1.0 / 128);
}

TEST(Projection, OtherShapesAreAtLinear) {
  at::manual_seed(5);
  const at::Tensor weight = at::randn({64, 48}), bias = at::randn({64});
  const at::Tensor rows = at::randn({2, 5, 48}), row = at::randn({1, 48});
  EXPECT_TRUE(at::equal(project(rows, weight), at::linear(rows, weight)));
  EXPECT_TRUE(at::equal(project(row, weight, bias), at::linear(row, weight, bias)));
  const at::Tensor strided =
      at::randn({48, 64}).t();  // a transposed weight is not the kernel's layout
  EXPECT_TRUE(at::equal(project(row, strided), at::linear(row, strided)));
}

}  // namespace
}  // namespace dfi::engine
