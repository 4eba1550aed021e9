// Rotary::apply on the CPU (one pass over the rows) against rotate-half RoPE written out as
// transformers writes it (apply_rotary_pos_emb), with partial rotation and a strided
// [B, heads, T, D] view, in fp32 and bf16 (exactly: the same roundings).

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "kernels/rotary.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

at::Tensor rotateHalf(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

TEST(Rotary, MatchesTheTransformersFormulation) {
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    at::manual_seed(9);
    const int64_t rot = 16, dim = 24, steps = 5;
    const at::Tensor x = at::randn({2, steps, 3, dim}).to(dtype).transpose(1, 2);  // [B, heads, T, D], strided
    RotaryAngles angles{at::randn({steps, rot}).to(dtype), at::randn({steps, rot}).to(dtype)};
    const at::Tensor xRot = x.narrow(-1, 0, rot);
    const at::Tensor expected =
        at::cat({xRot * angles.cos + rotateHalf(xRot) * angles.sin, x.narrow(-1, rot, dim - rot)}, -1);
    const at::Tensor got = Rotary::apply(x, angles);
    EXPECT_EQ(got.sizes(), x.sizes());
    EXPECT_EQ(got.scalar_type(), dtype);
    EXPECT_EQ(test::maxAbsDiff(got, expected), 0.0) << c10::toString(dtype);
  }
}

}  // namespace
}  // namespace dfi::engine
