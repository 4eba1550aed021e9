#pragma once
// Stored elements as doubles: any numeric safetensors dtype (floats of every width, the fp8
// formats, integers, bool) read from a tensor's little-endian bytes, for code that compares
// or summarises tensors without caring how they were stored.

#include <cstdint>
#include <span>

#include "dfi/tensorfile/dtype.h"
#include "dfi/tensorfile/tensor_info.h"

namespace dfi::tensorfile {

// Scalar conversions of one stored element (bit patterns as the formats define them; F8_E4M3
// is the "fn" variant: no infinities, 0x7F/0xFF are NaN).
double halfToDouble(std::uint16_t bits);
double bfloat16ToDouble(std::uint16_t bits);
double float8E4M3ToDouble(std::uint8_t bits);
double float8E5M2ToDouble(std::uint8_t bits);

// out[i] = element (first + i) of `bytes` interpreted as `dtype`, for i < out.size(). The
// bytes need no alignment. The caller keeps first + out.size() within the tensor.
void readElements(DType dtype, std::span<const std::byte> bytes, std::int64_t first, std::span<double> out);

// The same on a tensor view; throws dfi::UsageError naming the tensor when the range
// [first, first + out.size()) is outside it.
void readElements(const TensorView& view, std::int64_t first, std::span<double> out);

}  // namespace dfi::tensorfile
