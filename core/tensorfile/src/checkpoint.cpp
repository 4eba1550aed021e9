#include "dfi/tensorfile/checkpoint.h"

#include <algorithm>
#include <set>

#include "checkpoint_index.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/tensorfile/sha256.h"

namespace dfi::tensorfile {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

// Opens the shards an index names and checks that each listed tensor is in its shard.
std::vector<SafetensorsFile> openIndexedShards(const fs::path& indexFile) {
  const auto entries = detail::readCheckpointIndex(indexFile);
  const std::string index = indexFile.string();
  std::map<std::string, const detail::IndexEntry*> firstEntryOfShard;
  for (const auto& entry : entries) firstEntryOfShard.try_emplace(entry.shard, &entry);

  std::vector<SafetensorsFile> shards;
  std::map<std::string, std::size_t> shardByName;
  for (const auto& [shard, entry] : firstEntryOfShard) {
    const fs::path shardPath = indexFile.parent_path() / shard;
    if (!fs::is_regular_file(shardPath)) {
      throw IoError("shard " + shardPath.string() + " does not exist",
                    {.file = index, .item = entry->tensor, .byteOffset = entry->offset});
    }
    shardByName.emplace(shard, shards.size());
    shards.push_back(SafetensorsFile::open(shardPath));
  }
  std::set<std::string_view> listed;
  for (const auto& entry : entries) {
    listed.insert(entry.tensor);
    if (!shards[shardByName.at(entry.shard)].find(entry.tensor)) {
      throw FormatError("shard " + entry.shard + " has no such tensor",
                        {.file = index, .item = entry.tensor, .byteOffset = entry.offset});
    }
  }
  // transformers loads every tensor of every shard, listed or not; so do we, but say so.
  for (const auto& shard : shards) {
    std::size_t unlisted = 0;
    for (const auto& info : shard.tensors()) unlisted += !listed.contains(info.name);
    if (unlisted > 0)
      logger("tensorfile")->warn("{}: {} tensors are not listed in {}", shard.path().string(), unlisted, index);
  }
  return shards;
}

std::vector<SafetensorsFile> openShards(const fs::path& dirOrFile) {
  if (fs::is_directory(dirOrFile)) {
    if (fs::is_regular_file(dirOrFile / kSingleFile)) return {SafetensorsFile::open(dirOrFile / kSingleFile)};
    if (fs::is_regular_file(dirOrFile / kIndexFile)) return openIndexedShards(dirOrFile / kIndexFile);
    throw IoError(std::string("neither ") + kSingleFile + " nor " + kIndexFile + " is in the directory",
                  {.file = dirOrFile.string()});
  }
  if (dirOrFile.string().ends_with(".index.json")) return openIndexedShards(dirOrFile);
  return {SafetensorsFile::open(dirOrFile)};
}

}  // namespace

Checkpoint Checkpoint::open(const fs::path& dirOrFile, NameMapping mapping) {
  auto shards = openShards(dirOrFile);
  std::sort(shards.begin(), shards.end(), [](const SafetensorsFile& a, const SafetensorsFile& b) {
    return a.path().filename() < b.path().filename();
  });
  Checkpoint checkpoint(dirOrFile, std::move(shards), mapping);
  logger("tensorfile")->debug("{}: {} tensors, {} bytes in {} shards", dirOrFile.string(),
                              checkpoint.entries_.size(), checkpoint.totalBytes(), checkpoint.shards_.size());
  return checkpoint;
}

Checkpoint::Checkpoint(fs::path path, std::vector<SafetensorsFile> shards, const NameMapping& mapping)
    : path_(std::move(path)), shards_(std::move(shards)) {
  std::map<std::string_view, const TensorInfo*> stored;
  Sha256 identity;
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    identity.update(shards_[s].rawHeader());
    for (const auto& info : shards_[s].tensors()) {
      const ErrorContext where{.file = info.file.string(), .item = info.name, .byteOffset = info.fileOffset};
      if (auto [it, added] = stored.emplace(info.name, &info); !added)
        throw FormatError("tensor is also stored in " + it->second->file.string(), where);
      auto name = mapping.map(info.name);
      if (!name) continue;
      Entry entry{info, s};
      entry.info.name = *name;
      if (auto [it, added] = entries_.emplace(*name, std::move(entry)); !added)
        throw FormatError("maps to \"" + *name + "\", the name of \"" + it->second.info.storedName + "\" too", where);
    }
  }
  headerSha256_ = identity.hexDigest();
}

const Checkpoint::Entry& Checkpoint::entry(std::string_view name) const {
  auto it = entries_.find(name);
  if (it == entries_.end())
    throw ValidationError("the checkpoint has no such tensor", {.file = path_.string(), .item = std::string(name)});
  return it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) names.push_back(name);
  return names;
}

bool Checkpoint::contains(std::string_view name) const { return entries_.find(name) != entries_.end(); }

const TensorInfo& Checkpoint::info(std::string_view name) const { return entry(name).info; }

TensorView Checkpoint::tensor(std::string_view name) const {
  const Entry& found = entry(name);
  return TensorView(found.info, shards_[found.shard].fileBytes().subspan(found.info.fileOffset, found.info.byteSize));
}

void Checkpoint::releasePages(std::string_view name) const {
  const Entry& found = entry(name);
  shards_[found.shard].mapping().releasePages(found.info.fileOffset, found.info.byteSize);
}

std::uint64_t Checkpoint::totalBytes() const {
  std::uint64_t total = 0;
  for (const auto& [name, entry] : entries_) total += entry.info.byteSize;
  return total;
}

}  // namespace dfi::tensorfile
