#include "dfi/tensorfile/safetensors_file.h"

#include "dfi/base/error.h"

namespace dfi::tensorfile {

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& file) {
  auto mapping = MappedFile::open(file);
  auto header = parseSafetensorsHeader(mapping->bytes(), file);
  return SafetensorsFile(std::move(mapping), std::move(header));
}

SafetensorsFile::SafetensorsFile(std::shared_ptr<const MappedFile> mapping, SafetensorsHeader header)
    : mapping_(std::move(mapping)), header_(std::move(header)) {
  // Names are unique: the header parser rejects duplicate keys.
  for (std::size_t i = 0; i < header_.tensors.size(); ++i) indexByName_.emplace(header_.tensors[i].name, i);
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = indexByName_.find(name);
  return it == indexByName_.end() ? nullptr : &header_.tensors[it->second];
}

TensorView SafetensorsFile::view(std::string_view name) const {
  const TensorInfo* info = find(name);
  if (!info) throw ValidationError("no such tensor", {.file = path().string(), .item = std::string(name)});
  return TensorView(*info, fileBytes().subspan(info->fileOffset, info->byteSize));
}

std::span<const std::byte> SafetensorsFile::rawHeader() const {
  return fileBytes().first(header_.dataStart());
}

}  // namespace dfi::tensorfile
