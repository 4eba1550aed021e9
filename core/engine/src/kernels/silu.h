#pragma once
// SiLU of one fp32 value, z * sigmoid(z), as the engine's CPU kernels apply it (the gated norm
// and the causal convolution); the ATen forms call at::silu.

#include <cmath>

namespace dfi::engine {

inline float silu(float z) { return z / (1.0f + std::exp(-z)); }

}  // namespace dfi::engine
