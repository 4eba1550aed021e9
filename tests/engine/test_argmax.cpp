// argmaxLastDim(): the CPU two-pass kernel against at::argmax, index for index, in fp32 and
// bf16, with the cases where a greedy token is easy to get wrong: ties (the first wins), NaN
// (counts as the largest; the first wins), -inf rows, row lengths that are not a multiple of
// its 32-wide blocks, the maximum in the last element, and leading dimensions kept.

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "kernels/argmax.h"

namespace dfi::engine {
namespace {

void expectSameAsAtArgmax(const at::Tensor& x) {
  const at::Tensor got = argmaxLastDim(x), want = at::argmax(x, -1);
  ASSERT_EQ(got.sizes(), want.sizes());
  ASSERT_EQ(got.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(got, want)) << "got " << got << "\nwant " << want;
}

// Rows that exercise each case; a small integer range makes ties frequent.
at::Tensor hardRows(int64_t n) {
  at::Tensor x = at::randint(-3, 4, {12, n}).to(at::kFloat);
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  x[0].fill_(-inf);   // every value -inf: index 0
  x[1][n - 1] = 100;  // the maximum last
  x[2][n / 2] = nan;  // one NaN
  x[3][n - 1] = nan;  // NaN last, larger values before it
  x[3][0] = 100;
  x[4][n / 3] = nan;  // two NaNs: the first
  x[4][n / 2] = nan;
  x[5].fill_(7);  // all equal: index 0
  x[6][n - 1] = inf;
  x[7][0] = -0.0f;  // -0 and +0 are equal maxima
  x[7].narrow(0, 1, n - 1).fill_(-1);
  if (n > 1) x[7][n - 1] = 0.0f;
  return x;
}

TEST(Argmax, MatchesAtArgmaxInFp32) {
  at::manual_seed(5);
  for (const int64_t n : {1, 2, 31, 32, 33, 64, 100, 4160}) {
    SCOPED_TRACE("row length " + std::to_string(n));
    expectSameAsAtArgmax(hardRows(n));
    expectSameAsAtArgmax(at::randn({3, 5, n}));
  }
}

TEST(Argmax, MatchesAtArgmaxInBf16) {
  at::manual_seed(6);
  for (const int64_t n : {1, 33, 4160}) {
    SCOPED_TRACE("row length " + std::to_string(n));
    expectSameAsAtArgmax(hardRows(n).to(at::kBFloat16));
    // bf16 rounding makes near-equal logits tie: the first must still win.
    expectSameAsAtArgmax((at::randn({4, n}) * 0.01).to(at::kBFloat16));
  }
}

TEST(Argmax, NonContiguousAndOtherDtypesAgree) {
  at::manual_seed(7);
  expectSameAsAtArgmax(at::randn({40, 6}).t());              // strided rows
  expectSameAsAtArgmax(at::randn({3, 50}).to(at::kDouble));  // at::argmax's path
  expectSameAsAtArgmax(at::randint(0, 9, {4, 20}, at::kLong));
  expectSameAsAtArgmax(at::randn({70}));  // one row: a 0-d result
}

}  // namespace
}  // namespace dfi::engine
