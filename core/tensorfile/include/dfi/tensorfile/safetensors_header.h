#pragma once
// The safetensors header: an 8-byte little-endian length N, N bytes of UTF-8 JSON, then the
// data buffer. parseSafetensorsHeader takes bytes (not a file) so the fuzzer and the mmap
// reader share one validated path; encodeSafetensorsHeader is its inverse for the writer and
// for tools that lay out files without data (sparse benchmark checkpoints).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dfi/tensorfile/dtype.h"
#include "dfi/tensorfile/tensor_info.h"

namespace dfi::tensorfile {

// The reference implementation refuses longer headers (a guard against absurd allocations).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
inline constexpr std::uint64_t kHeaderLengthBytes = 8;

struct SafetensorsHeader {
  std::uint64_t jsonLength = 0;  // N
  std::vector<TensorInfo> tensors;  // ordered by data offset (then name)
  std::map<std::string, std::string> metadata;  // "__metadata__", empty if absent

  std::uint64_t dataStart() const { return kHeaderLengthBytes + jsonLength; }
};

// Parses and validates the header of the file whose complete contents are `fileBytes` (an
// mmap: tensor data is never touched). Rules, each a dfi::FormatError naming `file`, the tensor
// or field and the byte offset: the length prefix fits, N <= kMaxHeaderBytes, the JSON is
// well-formed UTF-8 without duplicate keys, every entry has a known dtype, a non-negative shape
// and data_offsets [begin, end] with end - begin == numel * dtype size, and the tensors tile
// the data buffer exactly (no overlap, no gap, nothing past the last tensor or the file end).
SafetensorsHeader parseSafetensorsHeader(std::span<const std::byte> fileBytes,
                                         const std::filesystem::path& file);

struct TensorLayout {
  std::string name;
  DType dtype = DType::U8;
  std::vector<std::int64_t> shape;
};

struct EncodedHeader {
  std::string bytes;                      // length prefix + JSON + space padding to 8 bytes
  std::vector<std::uint64_t> dataOffsets;  // begin of each tensor inside the data buffer
  std::uint64_t dataSize = 0;             // bytes of data that must follow `bytes`
};

// Lays the tensors out back to back in the given order. Throws dfi::UsageError for a name
// that is empty, not UTF-8, "__metadata__" or repeated, or a negative or overflowing shape.
EncodedHeader encodeSafetensorsHeader(std::span<const TensorLayout> tensors,
                                      const std::map<std::string, std::string>& metadata);

// numel(shape) * dtypeSize(dtype) (numel is 1 for rank 0), or nullopt if a dimension is
// negative or the result does not fit in an int64 (what a tensor library can index).
std::optional<std::uint64_t> tensorByteSize(DType dtype, std::span<const std::int64_t> shape);

}  // namespace dfi::tensorfile
