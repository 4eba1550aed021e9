#pragma once
// MXFP4 weights (gpt-oss experts): FP4 E2M1 values packed two per byte in blocks of 32 along
// the input dimension, one E8M0 scale byte per block. Dequantised once at load, with exactly
// transformers' dequantisation (integrations/mxfp4.py, convert_moe_packed_tensors).

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace dfi::engine {

class WeightLoader;

// blocks [..., R, G, 16] uint8, scales [..., R, G] uint8 -> values [..., R, G * 32] in `dtype`,
// transposed on the last two dims -> [..., G * 32, R], as transformers returns them. Per byte the
// low nibble is the even element and the high nibble the odd one; each value is
// E2M1(nibble) * 2^(scale - 127). `dtype` is the compute dtype (the values are exact in bf16).
at::Tensor dequantizeMxfp4(const at::Tensor& blocks, const at::Tensor& scales, at::ScalarType dtype);

// Loads `name`_blocks [E, out, in / 32, 16] and `name`_scales [E, out, in / 32] and returns
// the dequantised [E, in, out] (the layout of the unquantised checkpoint's `name`) in the
// loader's dtype on `device`. Shapes are checked against `numExperts`, `in` and `out` with the
// loader's errors (file, tensor, both shapes); `in` must be a multiple of 32.
at::Tensor loadMxfp4(const WeightLoader& weights, const std::string& name, int64_t numExperts, int64_t in,
                     int64_t out, at::Device device);

}  // namespace dfi::engine
