#include "dfi/tensorfile/element_values.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "dfi/base/error.h"

namespace dfi::tensorfile {
namespace {

template <class T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));  // little-endian hosts only, as the rest of the reader
  return value;
}

// A binary float of 1 sign bit, `exponentBits`, `mantissaBits` with IEEE-style subnormals.
// `hasInfinity`: the all-ones exponent means inf/NaN (false for E4M3fn, where only the
// all-ones pattern is NaN and the rest of that exponent holds ordinary numbers).
double decodeFloat(std::uint32_t bits, int exponentBits, int mantissaBits, bool hasInfinity) {
  const std::uint32_t mantissaMask = (1u << mantissaBits) - 1;
  const std::uint32_t exponentMask = (1u << exponentBits) - 1;
  const bool negative = (bits >> (exponentBits + mantissaBits)) & 1u;
  const std::uint32_t exponent = (bits >> mantissaBits) & exponentMask;
  const std::uint32_t mantissa = bits & mantissaMask;
  const int bias = (1 << (exponentBits - 1)) - 1;
  double value;
  if (exponent == exponentMask && hasInfinity) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == exponentMask && mantissa == mantissaMask) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissaBits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1u << mantissaBits)),
                       static_cast<int>(exponent) - bias - mantissaBits);
  }
  return negative ? -value : value;
}

template <class T, class Convert>
void convert(const std::byte* base, std::int64_t first, std::span<double> out, Convert convertOne) {
  const std::byte* p = base + first * static_cast<std::int64_t>(sizeof(T));
  for (double& value : out) {
    value = convertOne(load<T>(p));
    p += sizeof(T);
  }
}

}  // namespace

double halfToDouble(std::uint16_t bits) { return decodeFloat(bits, 5, 10, true); }

double bfloat16ToDouble(std::uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

double float8E4M3ToDouble(std::uint8_t bits) { return decodeFloat(bits, 4, 3, false); }
double float8E5M2ToDouble(std::uint8_t bits) { return decodeFloat(bits, 5, 2, true); }

void readElements(DType dtype, std::span<const std::byte> bytes, std::int64_t first, std::span<double> out) {
  const std::byte* base = bytes.data();
  auto same = [](auto v) { return static_cast<double>(v); };
  switch (dtype) {
    case DType::Bool: return convert<std::uint8_t>(base, first, out, [](std::uint8_t v) { return v ? 1.0 : 0.0; });
    case DType::U8: return convert<std::uint8_t>(base, first, out, same);
    case DType::I8: return convert<std::int8_t>(base, first, out, same);
    case DType::I16: return convert<std::int16_t>(base, first, out, same);
    case DType::I32: return convert<std::int32_t>(base, first, out, same);
    case DType::I64: return convert<std::int64_t>(base, first, out, same);
    case DType::F16: return convert<std::uint16_t>(base, first, out, halfToDouble);
    case DType::BF16: return convert<std::uint16_t>(base, first, out, bfloat16ToDouble);
    case DType::F32: return convert<float>(base, first, out, same);
    case DType::F64: return convert<double>(base, first, out, same);
    case DType::F8_E4M3: return convert<std::uint8_t>(base, first, out, float8E4M3ToDouble);
    case DType::F8_E5M2: return convert<std::uint8_t>(base, first, out, float8E5M2ToDouble);
  }
}

void readElements(const TensorView& view, std::int64_t first, std::span<double> out) {
  const std::int64_t count = static_cast<std::int64_t>(out.size());
  const std::int64_t numel = view.info().numel();
  if (first < 0 || first > numel || count > numel - first)
    throw UsageError("elements " + std::to_string(first) + ".." + std::to_string(first + count) +
                         " are outside the tensor's " + std::to_string(numel),
                     {.file = view.info().file.string(), .item = view.info().name});
  readElements(view.info().dtype, view.bytes(), first, out);
}

}  // namespace dfi::tensorfile
