#pragma once
// FP4 E2M1 by its 4-bit code: sign bit 3, exponent bits 2-1, mantissa bit 0 (the OCP
// microscaling format shared by MXFP4 and NVFP4).

#include <array>

namespace dfi::engine {

constexpr std::array<float, 16> kE2m1Values = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                                               -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

}  // namespace dfi::engine
