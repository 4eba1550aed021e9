#pragma once
// A Hugging Face checkpoint's weights: one model.safetensors or the shards listed by
// model.safetensors.index.json, every shard memory-mapped (headers read, data untouched), and
// tensor names passed through a NameMapping. Views are zero-copy, so loading weights through
// them never holds more host memory than the pages being copied out (call releasePages after
// each copy). A Checkpoint is immutable once open: its const members may be used from any
// thread, and copies share the mappings.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/tensorfile/name_mapping.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/tensorfile/tensor_info.h"

namespace dfi::tensorfile {

class Checkpoint {
 public:
  // `dirOrFile`: a directory holding model.safetensors or model.safetensors.index.json (the
  // single file wins when both exist, as in transformers), an index file, or one .safetensors
  // file. Throws dfi::IoError or dfi::FormatError naming the file, the tensor and the byte
  // offset: unreadable or corrupt shards, an index naming a missing shard or a tensor its shard
  // lacks, a name stored twice, or two stored names that map to one name.
  static Checkpoint open(const std::filesystem::path& dirOrFile, NameMapping mapping = NameMapping::qwenText());

  const std::filesystem::path& path() const { return path_; }
  std::vector<std::string> names() const;  // mapped names, sorted
  bool contains(std::string_view name) const;
  // Both throw dfi::ValidationError naming the checkpoint and the tensor if it is absent.
  const TensorInfo& info(std::string_view name) const;
  TensorView tensor(std::string_view name) const;
  // After a tensor has been copied out (to a device), drops its pages from this process's
  // resident set; its views stay valid (see MappedFile::releasePages).
  void releasePages(std::string_view name) const;

  // Bytes of the tensors this checkpoint exposes (skipped ones excluded).
  std::uint64_t totalBytes() const;
  // SHA-256 over the raw headers (8-byte length + JSON) of all shards in file-name order:
  // the identity a session records. It changes whenever any tensor's name, dtype, shape,
  // placement or the metadata changes, and costs no data reads.
  const std::string& headerSha256() const { return headerSha256_; }
  const std::vector<SafetensorsFile>& shards() const { return shards_; }  // in file-name order

 private:
  struct Entry {
    TensorInfo info;  // name: mapped; storedName: as in the shard
    std::size_t shard;
  };
  Checkpoint(std::filesystem::path path, std::vector<SafetensorsFile> shards, const NameMapping& mapping);
  const Entry& entry(std::string_view name) const;

  std::filesystem::path path_;
  std::vector<SafetensorsFile> shards_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::string headerSha256_;
};

}  // namespace dfi::tensorfile
