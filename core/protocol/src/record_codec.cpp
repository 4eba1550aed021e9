#include "dfi/protocol/record_codec.h"

#include "dfi/base/field_json.h"
#include "dfi/session/record_fields.h"

namespace dfi::protocol {
namespace {

namespace s = session;

// The frame "type" of each Record alternative: its field table's name; a batch of token
// strings is "tokens" (a list of "token" objects).
constexpr std::string_view kTokensType = "tokens";
constexpr std::string_view kTokensField = "tokens";

template <typename T>
constexpr std::string_view typeName() {
  if constexpr (std::is_same_v<T, TokenStrings>) return kTokensType;
  else if constexpr (std::is_same_v<T, s::TensorRecord>) return FieldTable<s::TensorInfo>::name;
  else return FieldTable<T>::name;
}

template <typename T>
nlohmann::json header(const T& record) {
  if constexpr (std::is_same_v<T, TokenStrings>) {
    return {{std::string(kTokensField), json_detail::encodeValue(record, false)}};
  } else if constexpr (std::is_same_v<T, s::TensorRecord>) {
    return toJson(record.info);
  } else {
    return toJson(record);
  }
}

template <typename T>
T fromFrame(const Frame& frame, std::string_view stream) {
  if constexpr (std::is_same_v<T, TokenStrings>) {
    const json_detail::Path type{stream, nullptr, kTokensType};
    const json_detail::Path path = type.field(kTokensField);
    const auto it = frame.header.find(std::string(kTokensField));
    if (it == frame.header.end()) path.fail("missing");
    TokenStrings tokens;
    json_detail::decodeValue(*it, tokens, false, path);
    return tokens;
  } else if constexpr (std::is_same_v<T, s::TensorRecord>) {
    s::TensorRecord t{.info = fromJson<s::TensorInfo>(frame.header, stream)};
    std::size_t expected = s::tensorDTypeSize(t.info.dtype);
    for (std::int64_t d : t.info.shape) {
      if (d < 0) throw FormatError("negative dimension", {.file = std::string(stream), .item = "tensor.shape"});
      expected *= static_cast<std::size_t>(d);
    }
    if (frame.payload.size() != expected)
      throw FormatError("payload has " + std::to_string(frame.payload.size()) + " bytes, shape x dtype needs " +
                            std::to_string(expected),
                        {.file = std::string(stream), .item = "tensor.shape"});
    t.data.assign(frame.payload.begin(), frame.payload.end());
    return t;
  } else {
    return fromJson<T>(frame.header, stream);
  }
}

// The Record alternative whose type name is `type`, decoded; nullopt for another name.
template <std::size_t I = 0>
std::optional<Record> decodeAlternative(std::string_view type, const Frame& frame, std::string_view stream) {
  if constexpr (I == std::variant_size_v<Record>) {
    return std::nullopt;
  } else {
    using T = std::variant_alternative_t<I, Record>;
    if (type == typeName<T>()) return Record(fromFrame<T>(frame, stream));
    return decodeAlternative<I + 1>(type, frame, stream);
  }
}

template <std::size_t I = 0>
bool isRecordType(std::string_view type) {
  if constexpr (I == std::variant_size_v<Record>) return false;
  else return type == typeName<std::variant_alternative_t<I, Record>>() || isRecordType<I + 1>(type);
}

}  // namespace

Frame encodeRecord(const Record& record) {
  Frame frame;
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        frame.header = header(r);
        frame.header[std::string(kFrameTypeKey)] = std::string(typeName<T>());
        if constexpr (std::is_same_v<T, s::TensorRecord>) frame.payload.assign(r.data.begin(), r.data.end());
      },
      record);
  return frame;
}

bool isRecordFrame(const Frame& frame) {
  const auto it = frame.header.find(std::string(kFrameTypeKey));
  return it != frame.header.end() && it->is_string() && isRecordType(it->get_ref<const std::string&>());
}

Record decodeRecord(const Frame& frame, std::string_view streamName) {
  const auto it = frame.header.find(std::string(kFrameTypeKey));
  if (it == frame.header.end() || !it->is_string())
    throw FormatError("a record frame needs a string \"type\"", {.file = std::string(streamName), .item = "record.type"});
  const std::string& type = it->get_ref<const std::string&>();
  if (auto record = decodeAlternative(type, frame, streamName)) return std::move(*record);
  throw FormatError("not a record type: '" + type + "'", {.file = std::string(streamName), .item = "record.type"});
}

}  // namespace dfi::protocol
