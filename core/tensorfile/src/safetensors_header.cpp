#include "dfi/tensorfile/safetensors_header.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "dfi/base/error.h"
#include "strict_json.h"
#include "dfi/base/utf8.h"

namespace dfi::tensorfile {
namespace {

using nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";
// {"name": {"shape": [..]}} is as deep as a valid header gets.
constexpr std::size_t kMaxHeaderDepth = 3;

std::uint64_t readLittleEndian64(std::span<const std::byte> bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint64_t>(bytes[i]);
  return value;
}

// Parses one header entry; everything but the placement in the data buffer is checked here.
class EntryParser {
 public:
  EntryParser(const std::filesystem::path& path, const std::string& file, const detail::JsonMember& member)
      : path_(path), file_(file), member_(member) {}

  TensorInfo parse(std::uint64_t dataStart, std::uint64_t dataSize) {
    if (!member_.value.is_object()) fail("the entry is not a JSON object");
    TensorInfo info;
    info.name = info.storedName = member_.key;
    info.dtype = parseDtype(field("dtype"));
    info.shape = parseShape(field("shape"));
    const auto offsets = parseOffsets(field("data_offsets"));
    const auto byteSize = tensorByteSize(info.dtype, info.shape);
    if (!byteSize) fail("shape " + field("shape").dump() + " has more elements than an int64 holds");
    if (offsets.second - offsets.first != *byteSize) {
      fail("data_offsets [" + std::to_string(offsets.first) + ", " + std::to_string(offsets.second) +
           "] hold " + std::to_string(offsets.second - offsets.first) + " bytes but " +
           std::string(dtypeName(info.dtype)) + " " + field("shape").dump() + " needs " +
           std::to_string(*byteSize));
    }
    // Checked before any addition: offsets near 2^64 must not wrap into the file.
    if (offsets.second > dataSize) {
      fail("data_offsets [" + std::to_string(offsets.first) + ", " + std::to_string(offsets.second) +
           "] run past the end of the data buffer (" + std::to_string(dataSize) + " bytes)");
    }
    info.byteSize = *byteSize;
    info.fileOffset = dataStart + offsets.first;
    info.file = path_;  // a copy; constructing from the string would split it again per tensor
    return info;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw FormatError(message, {.file = file_, .item = member_.key, .byteOffset = member_.offset});
  }

  const json& field(const char* name) const {
    auto it = member_.value.find(name);
    if (it == member_.value.end()) fail(std::string("the entry has no \"") + name + "\"");
    return *it;
  }

  DType parseDtype(const json& value) const {
    if (!value.is_string()) fail("dtype " + value.dump() + " is not a string");
    auto dtype = parseDType(value.get_ref<const std::string&>());
    if (!dtype) fail("unknown dtype " + value.dump());
    return *dtype;
  }

  std::vector<std::int64_t> parseShape(const json& value) const {
    if (!value.is_array()) fail("shape " + value.dump() + " is not an array");
    std::vector<std::int64_t> shape;
    for (const auto& dim : value) {
      if (!dim.is_number_unsigned() ||
          dim.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
        fail("shape " + value.dump() + " has a dimension that is not a non-negative int64");
      shape.push_back(dim.get<std::int64_t>());
    }
    return shape;
  }

  std::pair<std::uint64_t, std::uint64_t> parseOffsets(const json& value) const {
    if (!value.is_array() || value.size() != 2 || !value[0].is_number_unsigned() ||
        !value[1].is_number_unsigned())
      fail("data_offsets " + value.dump() + " is not a pair of non-negative integers");
    const auto begin = value[0].get<std::uint64_t>(), end = value[1].get<std::uint64_t>();
    if (end < begin) fail("data_offsets " + value.dump() + " end before they begin");
    return {begin, end};
  }

  const std::filesystem::path& path_;
  const std::string& file_;
  const detail::JsonMember& member_;
};

std::map<std::string, std::string> parseMetadata(const std::string& file, const detail::JsonMember& member) {
  const ErrorContext where{.file = file, .item = member.key, .byteOffset = member.offset};
  if (!member.value.is_object()) throw FormatError("__metadata__ is not a JSON object", where);
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : member.value.items()) {
    if (!value.is_string())
      throw FormatError("__metadata__ value of \"" + key + "\" is " + value.dump() + ", not a string", where);
    metadata.emplace(key, value.get<std::string>());
  }
  return metadata;
}

// Tensors must tile the data buffer: sorted by offset, each begins where the previous ended and
// the last one ends at the end of the file (the reference reader enforces the same).
void checkTiling(std::vector<TensorInfo>& tensors, const SafetensorsHeader& header,
                 std::uint64_t fileSize, const std::string& file) {
  // EntryParser has checked that every tensor lies inside the data buffer.
  const std::uint64_t dataStart = header.dataStart();
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return std::tie(a.fileOffset, a.byteSize, a.name) < std::tie(b.fileOffset, b.byteSize, b.name);
  });
  std::uint64_t expected = dataStart;
  const TensorInfo* previous = nullptr;
  for (const auto& t : tensors) {
    if (t.fileOffset < expected) {
      throw FormatError("data overlaps tensor \"" + previous->name + "\"",
                        {.file = file, .item = t.name, .byteOffset = t.fileOffset});
    }
    if (t.fileOffset > expected) {
      throw FormatError(std::to_string(t.fileOffset - expected) +
                            " bytes before this tensor's data belong to no tensor",
                        {.file = file, .item = t.name, .byteOffset = expected});
    }
    expected = t.fileOffset + t.byteSize;
    previous = &t;
  }
  if (expected != fileSize) {
    throw FormatError(std::to_string(fileSize - expected) + " bytes after the last tensor belong to no tensor",
                      {.file = file, .item = previous ? previous->name : "", .byteOffset = expected});
  }
}

}  // namespace

std::optional<std::uint64_t> tensorByteSize(DType dtype, std::span<const std::int64_t> shape) {
  // A checked running product, as the reference reader computes it: [2^40, 2^40, 0] is refused
  // even though it has no elements.
  constexpr auto kLimit = std::uint64_t(std::numeric_limits<std::int64_t>::max());
  std::uint64_t numel = 1;
  for (auto dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim != 0 && numel > kLimit / std::uint64_t(dim)) return std::nullopt;
    numel *= std::uint64_t(dim);
  }
  if (numel > kLimit / dtypeSize(dtype)) return std::nullopt;
  return numel * dtypeSize(dtype);
}

SafetensorsHeader parseSafetensorsHeader(std::span<const std::byte> fileBytes, const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::uint64_t fileSize = fileBytes.size();
  if (fileSize < kHeaderLengthBytes) {
    throw FormatError("file has " + std::to_string(fileSize) + " bytes, fewer than the 8-byte header length",
                      {.file = file, .byteOffset = 0});
  }
  SafetensorsHeader header;
  header.jsonLength = readLittleEndian64(fileBytes);
  if (header.jsonLength > kMaxHeaderBytes) {
    throw FormatError("header length " + std::to_string(header.jsonLength) + " exceeds the limit of " +
                          std::to_string(kMaxHeaderBytes) + " bytes",
                      {.file = file, .byteOffset = 0});
  }
  if (header.jsonLength > fileSize - kHeaderLengthBytes) {
    throw FormatError("header length " + std::to_string(header.jsonLength) +
                          " runs past the end of the file (" + std::to_string(fileSize) + " bytes)",
                      {.file = file, .byteOffset = 0});
  }
  const std::string_view text(reinterpret_cast<const char*>(fileBytes.data()) + kHeaderLengthBytes,
                              header.jsonLength);
  if (auto bad = utf8::firstInvalidByte(text)) {
    throw FormatError("header is not valid UTF-8", {.file = file, .byteOffset = kHeaderLengthBytes + *bad});
  }
  const auto members = detail::parseStrictJsonObject(
      text, {.file = file, .baseOffset = kHeaderLengthBytes, .maxDepth = kMaxHeaderDepth});
  for (const auto& member : members) {
    if (member.key == kMetadataKey) header.metadata = parseMetadata(file, member);
    else header.tensors.push_back(EntryParser(path, file, member).parse(header.dataStart(), fileSize - header.dataStart()));
  }
  checkTiling(header.tensors, header, fileSize, file);
  return header;
}

}  // namespace dfi::tensorfile
