#pragma once
// Small arrays (token ids, top-k tables, tree parents, statistics) are stored as compact
// little-endian BLOBs: int32 and float32 arrays are 4 bytes per element, int64 arrays 8, no
// header (the element count is the BLOB size divided by the element size). SCHEMA.md documents
// the encoding. On little-endian hosts encoding is a zero-copy view of the vector.

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "dfi/base/error.h"

namespace dfi::session::detail {

template <typename T>
concept BlobElement = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
                      std::is_same_v<T, float> || std::is_same_v<T, std::uint8_t>;

template <BlobElement T>
T byteSwapped(T value) {
  if constexpr (sizeof(T) == 1) {
    return value;
  } else {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(bytes[i], bytes[sizeof(T) - 1 - i]);
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }
}

// The little-endian bytes of `values`; `scratch` holds them only on big-endian hosts.
template <BlobElement T>
std::span<const std::uint8_t> encodeBlob(std::span<const T> values, std::vector<std::uint8_t>& scratch) {
  if constexpr (std::endian::native == std::endian::little || sizeof(T) == 1) {
    return {reinterpret_cast<const std::uint8_t*>(values.data()), values.size_bytes()};
  } else {
    scratch.resize(values.size_bytes());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const T swapped = byteSwapped(values[i]);
      std::memcpy(scratch.data() + i * sizeof(T), &swapped, sizeof(T));
    }
    return scratch;
  }
}

// Decodes a BLOB written by encodeBlob; a size that is not a whole number of elements
// means the file is damaged.
template <BlobElement T>
std::vector<T> decodeBlob(std::span<const std::uint8_t> bytes, const ErrorContext& where) {
  if (bytes.size() % sizeof(T) != 0)
    throw FormatError("array BLOB of " + std::to_string(bytes.size()) + " bytes is not a multiple of " +
                          std::to_string(sizeof(T)),
                      where);
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  if constexpr (std::endian::native != std::endian::little && sizeof(T) > 1)
    for (T& v : values) v = byteSwapped(v);
  return values;
}

}  // namespace dfi::session::detail
