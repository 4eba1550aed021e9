#pragma once
// One .safetensors file: its validated header, and zero-copy views of its tensors through a
// private read-only mapping. Opening reads the header pages only; copies share the mapping.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/tensorfile/mapped_file.h"
#include "dfi/tensorfile/safetensors_header.h"
#include "dfi/tensorfile/tensor_info.h"

namespace dfi::tensorfile {

class SafetensorsFile {
 public:
  // Throws dfi::IoError (cannot open or map) or dfi::FormatError (see parseSafetensorsHeader).
  static SafetensorsFile open(const std::filesystem::path& file);

  const std::filesystem::path& path() const { return mapping_->path(); }
  const std::vector<TensorInfo>& tensors() const { return header_.tensors; }  // in data order
  const TensorInfo* find(std::string_view name) const;
  // Throws dfi::ValidationError naming the file and the tensor if there is no such tensor.
  TensorView view(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }

  // The first 8 + N bytes: length prefix and JSON, exactly as stored.
  std::span<const std::byte> rawHeader() const;
  // The whole mapped file; TensorInfo::fileOffset indexes into it.
  std::span<const std::byte> fileBytes() const { return mapping_->bytes(); }
  const MappedFile& mapping() const { return *mapping_; }

 private:
  SafetensorsFile(std::shared_ptr<const MappedFile> mapping, SafetensorsHeader header);

  std::shared_ptr<const MappedFile> mapping_;
  SafetensorsHeader header_;
  std::map<std::string, std::size_t, std::less<>> indexByName_;
};

}  // namespace dfi::tensorfile
