// project(): the CPU kernels against at::linear -- the fp32 tile (1-32 rows, four weight rows
// at a time, 8 lanes) for row counts, lengths and output counts that are not multiples of its
// tile, and the bf16 one-row kernel for lengths that are not a multiple of its 32 running sums
// -- and the shapes they hand over to at::linear unchanged, a prefill's many rows among them.

#include <string>

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "kernels/projection.h"
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

TEST(Projection, FewRowsMatchAtLinearInFp32) {
  at::manual_seed(6);
  for (const int64_t rows : {2, 3, 4, 5, 15, 16, 17, 32})
    for (const int64_t n : {7, 8, 77, 128}) {
      for (const int64_t outputs : {1, 6, 300, 4161}) {
        const at::Tensor weight = at::randn({outputs, n});
        // Strided rows (a narrowed view) and a leading batch dimension, as the engine passes them.
        const at::Tensor x = at::randn({1, rows + 2, n}).narrow(1, 1, rows);
        const at::Tensor got = project(x, weight);
        EXPECT_EQ(got.sizes(), (at::IntArrayRef{1, rows, outputs}));
        EXPECT_LE(test::maxAbsDiff(got, at::linear(x, weight)), 1e-5 * std::sqrt(static_cast<double>(n)))
            << rows << " rows, n " << n << ", " << outputs << " outputs";
      }
    }
}

TEST(Projection, OtherShapesAreAtLinear) {
  at::manual_seed(5);
  const at::Tensor weight = at::randn({64, 48}), bias = at::randn({64});
  const at::Tensor many = at::randn({3, 11, 48}), row = at::randn({1, 48}), none = at::randn({0, 48});
  EXPECT_TRUE(at::equal(project(many, weight), at::linear(many, weight)));  // 33 rows
  const at::Tensor prefill = at::randn({1, 256, 48});
  EXPECT_TRUE(at::equal(project(prefill, weight, bias), at::linear(prefill, weight, bias)));
  EXPECT_TRUE(at::equal(project(row, weight, bias), at::linear(row, weight, bias)));
  EXPECT_EQ(project(none, weight).sizes(), (at::IntArrayRef{0, 64}));
  const at::Tensor strided =
      at::randn({48, 64}).t();  // a transposed weight is not the kernels' layout
  EXPECT_TRUE(at::equal(project(row, strided), at::linear(row, strided)));
  const at::Tensor half = weight.to(at::kBFloat16), rows = at::randn({2, 48}).to(at::kBFloat16);
  EXPECT_TRUE(at::equal(project(rows, half), at::linear(rows, half)));  // bf16 from two rows on
  EXPECT_EQ(project(none.to(at::kBFloat16), half).sizes(), (at::IntArrayRef{0, 64}));
}

}  // namespace
}  // namespace dfi::engine
