#pragma once
// model.safetensors.index.json as save_pretrained writes it:
// {"metadata": {"total_size": ...}, "weight_map": {"<tensor>": "<shard file>", ...}}.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dfi::tensorfile::detail {

struct IndexEntry {
  std::string tensor;
  std::string shard;    // file name relative to the index's directory
  std::uint64_t offset;  // of the entry in the index file, for error messages
};

// Throws dfi::IoError if the file cannot be read, dfi::FormatError (naming the tensor and byte
// offset) for bad JSON, duplicate names, a missing weight_map or a shard path that is absolute
// or leaves the checkpoint directory.
std::vector<IndexEntry> readCheckpointIndex(const std::filesystem::path& indexFile);

}  // namespace dfi::tensorfile::detail
