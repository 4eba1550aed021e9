#pragma once
// What the reader knows about one stored tensor, and a zero-copy view of its bytes.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "dfi/tensorfile/dtype.h"

namespace dfi::tensorfile {

struct TensorInfo {
  std::string name;        // as the caller asks for it (after NameMapping in a Checkpoint)
  std::string storedName;  // as written in the file
  DType dtype = DType::U8;
  std::vector<std::int64_t> shape;  // empty for a rank-0 tensor
  std::uint64_t byteSize = 0;       // numel() * dtypeSize(dtype), checked at open
  std::uint64_t fileOffset = 0;     // absolute offset of the first byte in `file`
  std::filesystem::path file;

  std::int64_t numel() const;
};

// Little-endian, row-major bytes of one tensor inside a memory mapping. The pointer is only as
// aligned as the file makes it (safetensors guarantees nothing; writers align to 8 in
// practice). Valid while the SafetensorsFile or Checkpoint it came from, or a copy of it, lives.
class TensorView {
 public:
  TensorView(const TensorInfo& info, std::span<const std::byte> bytes) : info_(&info), bytes_(bytes) {}

  const TensorInfo& info() const { return *info_; }
  std::span<const std::byte> bytes() const { return bytes_; }
  const void* data() const { return bytes_.data(); }

 private:
  const TensorInfo* info_;
  std::span<const std::byte> bytes_;
};

}  // namespace dfi::tensorfile
