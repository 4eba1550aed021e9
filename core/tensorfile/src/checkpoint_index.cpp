#include "checkpoint_index.h"

#include <fstream>
#include <sstream>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_header.h"
#include "strict_json.h"
#include "utf8.h"

namespace dfi::tensorfile::detail {
namespace {

std::string readSmallFile(const std::filesystem::path& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) throw IoError("cannot read: " + error.message(), {.file = path.string()});
  // Same guard as for safetensors headers: an index is a few megabytes at most.
  if (size > kMaxHeaderBytes)
    throw FormatError("index of " + std::to_string(size) + " bytes exceeds the limit of " +
                          std::to_string(kMaxHeaderBytes),
                      {.file = path.string(), .byteOffset = 0});
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!(text << in.rdbuf()) && size > 0) throw IoError("cannot read", {.file = path.string()});
  return std::move(text).str();
}

bool staysInside(const std::filesystem::path& relative) {
  if (relative.empty() || relative.is_absolute()) return false;
  for (const auto& part : relative)
    if (part == "..") return false;
  return true;
}

}  // namespace

std::vector<IndexEntry> readCheckpointIndex(const std::filesystem::path& indexFile) {
  const std::string file = indexFile.string();
  const std::string text = readSmallFile(indexFile);
  if (auto bad = findInvalidUtf8(text)) throw FormatError("index is not valid UTF-8", {.file = file, .byteOffset = *bad});
  const auto members = parseStrictJsonObject(text, {.file = file});
  const JsonMember* weightMap = nullptr;
  for (const auto& member : members)
    if (member.key == "weight_map") weightMap = &member;
  if (!weightMap) throw FormatError("the index has no \"weight_map\"", {.file = file, .byteOffset = 0});
  if (!weightMap->value.is_object())
    throw FormatError("\"weight_map\" is not a JSON object", {.file = file, .item = "weight_map", .byteOffset = weightMap->offset});

  std::vector<IndexEntry> entries;
  for (const auto& [tensor, shard] : weightMap->value.items()) {
    const std::uint64_t offset = weightMap->childKeyOffsets.at(tensor);
    const ErrorContext where{.file = file, .item = tensor, .byteOffset = offset};
    if (!shard.is_string()) throw FormatError("shard " + shard.dump() + " is not a file name", where);
    const auto& shardName = shard.get_ref<const std::string&>();
    if (!staysInside(shardName))
      throw FormatError("shard \"" + shardName + "\" is not a file inside the checkpoint directory", where);
    entries.push_back({tensor, shardName, offset});
  }
  return entries;
}

}  // namespace dfi::tensorfile::detail
