#include "checkpoint_index.h"

#include "dfi/base/error.h"
#include "dfi/tensorfile/mapped_file.h"
#include "dfi/tensorfile/safetensors_header.h"
#include "strict_json.h"
#include "dfi/base/utf8.h"

namespace dfi::tensorfile::detail {
namespace {

bool staysInside(const std::filesystem::path& relative) {
  if (relative.empty() || relative.is_absolute()) return false;
  for (const auto& part : relative)
    if (part == "..") return false;
  return true;
}

}  // namespace

std::vector<IndexEntry> readCheckpointIndex(const std::filesystem::path& indexFile) {
  const std::string file = indexFile.string();
  const auto mapping = MappedFile::open(indexFile);
  // Same guard as for safetensors headers: an index is a few megabytes at most.
  if (mapping->bytes().size() > kMaxHeaderBytes)
    throw FormatError("index of " + std::to_string(mapping->bytes().size()) + " bytes exceeds the limit of " +
                          std::to_string(kMaxHeaderBytes),
                      {.file = file, .byteOffset = 0});
  const std::string_view text(reinterpret_cast<const char*>(mapping->bytes().data()), mapping->bytes().size());
  if (auto bad = utf8::firstInvalidByte(text)) throw FormatError("index is not valid UTF-8", {.file = file, .byteOffset = *bad});
  const auto members = parseStrictJsonObject(text, {.file = file, .recordChildKeys = true});
  const JsonMember* weightMap = nullptr;
  for (const auto& member : members)
    if (member.key == "weight_map") weightMap = &member;
  if (!weightMap) throw FormatError("the index has no \"weight_map\"", {.file = file, .byteOffset = 0});
  if (!weightMap->value.is_object())
    throw FormatError("\"weight_map\" is not a JSON object", {.file = file, .item = "weight_map", .byteOffset = weightMap->offset});

  std::vector<IndexEntry> entries;
  for (const auto& [tensor, offset] : weightMap->childKeys) {
    const auto& shard = weightMap->value.at(tensor);
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
