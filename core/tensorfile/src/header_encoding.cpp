#include <set>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_header.h"
#include "dfi/base/utf8.h"

namespace dfi::tensorfile {
namespace {

void requireUtf8(const std::string& text, const std::string& what) {
  if (utf8::firstInvalidByte(text)) throw UsageError(what + " is not valid UTF-8", {.item = text});
}

}  // namespace

EncodedHeader encodeSafetensorsHeader(std::span<const TensorLayout> tensors,
                                      const std::map<std::string, std::string>& metadata) {
  // ordered_json keeps __metadata__ first and tensors in data order, like the reference writer.
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    for (const auto& [key, value] : metadata) {
      requireUtf8(key, "metadata key");
      requireUtf8(value, "metadata value");
    }
    json["__metadata__"] = metadata;
  }
  EncodedHeader encoded;
  std::set<std::string_view> names;
  for (const auto& tensor : tensors) {
    const ErrorContext where{.item = tensor.name};
    if (tensor.name.empty() || tensor.name == "__metadata__")
      throw UsageError("\"" + tensor.name + "\" cannot name a tensor", where);
    requireUtf8(tensor.name, "tensor name");
    if (!names.insert(tensor.name).second) throw UsageError("tensor name used twice", where);
    const auto byteSize = tensorByteSize(tensor.dtype, tensor.shape);
    if (!byteSize) throw UsageError("shape has a negative dimension or too many elements", where);
    encoded.dataOffsets.push_back(encoded.dataSize);
    json[tensor.name] = {{"dtype", dtypeName(tensor.dtype)},
                         {"shape", tensor.shape},
                         {"data_offsets", {encoded.dataSize, encoded.dataSize + *byteSize}}};
    encoded.dataSize += *byteSize;
  }
  std::string text = json.dump();
  // Pad with spaces so the data buffer starts 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  encoded.bytes.resize(kHeaderLengthBytes);
  for (std::size_t i = 0; i < kHeaderLengthBytes; ++i)
    encoded.bytes[i] = static_cast<char>((std::uint64_t(text.size()) >> (8 * i)) & 0xFF);
  encoded.bytes += text;
  return encoded;
}

}  // namespace dfi::tensorfile
