#pragma once
// Conversions between fp32 and an activation dtype for the CPU kernels' loops, with exactly
// c10's results. c10's bf16 rounding branches on NaN, which keeps the compiler from
// vectorising a loop around it: with it, the bf16 norms and RoPE of a 256-token prefill ran
// 3-5x slower than ATen's vectorised ops. These are branch-free bit operations.

#include <cstdint>
#include <cstring>

#include <c10/util/BFloat16.h>

namespace dfi::engine {

template <typename T>
inline float toFloat(T x) {
  return static_cast<float>(x);
}

template <>
inline float toFloat(c10::BFloat16 x) {  // bf16 is the high half of an fp32
  const std::uint32_t bits = static_cast<std::uint32_t>(x.x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
inline T fromFloat(float f) {
  return static_cast<T>(f);
}

template <>
inline c10::BFloat16 fromFloat(float f) {  // round to nearest even; any NaN becomes c10's 0x7FC0
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const std::uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  return {static_cast<std::uint16_t>(f != f ? 0x7FC0u : rounded), c10::BFloat16::from_bits()};
}

// f as it reads after a round trip through T (where transformers casts to the activation dtype).
template <typename T>
inline float roundedTo(float f) {
  return toFloat(fromFloat<T>(f));
}

}  // namespace dfi::engine
