// float_casts.h: the kernels' branch-free bf16 conversions give exactly c10's bits, for every
// bf16 value (widening) and for fp32 values around every rounding case (narrowing): ties to
// even, carries into the exponent, overflow to infinity, denormals, signed zeros and NaNs.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include "kernels/float_casts.h"

namespace dfi::engine {
namespace {

float fromBits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint32_t bitsOf(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

TEST(FloatCasts, WideningEveryBf16IsC10s) {
  for (std::uint32_t raw = 0; raw <= 0xFFFF; ++raw) {
    const c10::BFloat16 x(static_cast<std::uint16_t>(raw), c10::BFloat16::from_bits());
    const float want = static_cast<float>(x), got = toFloat(x);
    EXPECT_EQ(bitsOf(got), bitsOf(want)) << std::hex << raw;
  }
}

TEST(FloatCasts, NarrowingToBf16IsC10sRounding) {
  std::vector<float> values{0.0f,
                            -0.0f,
                            1.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            fromBits(0x7F800001u),  // a signalling NaN
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min()};
  // Every low half that decides a rounding (below, at and above the tie, odd and even kept
  // bit), over high halves that carry into the exponent or overflow.
  for (const std::uint32_t high :
       {0x3F80u, 0x3F81u, 0x3FFFu, 0x7F7Fu, 0x0000u, 0x0001u, 0x807Fu, 0xBF80u})
    for (const std::uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      values.push_back(fromBits(high << 16 | low));
  std::mt19937 random(11);
  for (int i = 0; i < 200000; ++i) values.push_back(fromBits(static_cast<std::uint32_t>(random())));
  for (const float f : values) {
    const c10::BFloat16 want = static_cast<c10::BFloat16>(f), got = fromFloat<c10::BFloat16>(f);
    EXPECT_EQ(got.x, want.x) << std::hex << bitsOf(f);
  }
}

TEST(FloatCasts, OtherTypesAreStaticCasts) {
  EXPECT_EQ(toFloat(c10::Half(1.5f)), 1.5f);
  EXPECT_EQ(fromFloat<c10::Half>(0.1f).x, static_cast<c10::Half>(0.1f).x);
  EXPECT_EQ(roundedTo<float>(0.1f), 0.1f);
  EXPECT_EQ(roundedTo<c10::BFloat16>(1.0f + 1.0f / 256), 1.0f);  // a tie: to even
}

}  // namespace
}  // namespace dfi::engine
