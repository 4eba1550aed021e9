#pragma once
// Writes a .safetensors file that the reference library reads back bit for bit. Tensors are
// laid out largest element size first (then by name), so every tensor is aligned to its
// element size, and the file appears atomically: written to a temporary file next to it,
// synced, then renamed over the target.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dfi/tensorfile/dtype.h"
#include "dfi/tensorfile/safetensors_header.h"

namespace dfi::tensorfile {

class SafetensorsWriter {
 public:
  explicit SafetensorsWriter(std::filesystem::path file);

  // Copies `data`. Throws dfi::UsageError if the name is empty, "__metadata__", not UTF-8 or
  // already added, or if data.size() is not numel(shape) * dtypeSize(dtype).
  void add(std::string name, DType dtype, std::vector<std::int64_t> shape, std::span<const std::byte> data);
  void setMetadata(std::string key, std::string value);
  // Throws dfi::IoError naming the file and the byte offset reached when writing fails (disk
  // full, no permission); the target is then left as it was. A writer finishes once.
  void finish();

 private:
  struct Pending {
    TensorLayout layout;
    std::vector<std::byte> data;
  };
  std::filesystem::path file_;
  std::vector<Pending> tensors_;
  std::set<std::string, std::less<>> names_;
  std::map<std::string, std::string> metadata_;
  bool finished_ = false;
};

}  // namespace dfi::tensorfile
