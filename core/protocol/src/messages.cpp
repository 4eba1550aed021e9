#include "dfi/protocol/messages.h"

#include <array>
#include <utility>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/protocol/message_fields.h"

namespace dfi {

namespace protocol {
namespace {

// What every frame says first: which message it is.
struct MessageType {
  std::string type;
};

// A request's id, read on its own so that an error reply can name the request even when the
// rest of it does not decode.
struct RequestIdOnly {
  RequestId requestId = kNoRequest;
};

}  // namespace
}  // namespace protocol

template <>
struct FieldTable<protocol::MessageType> {
  using R = protocol::MessageType;
  static constexpr std::string_view name = "message";
  static constexpr auto fields = std::tuple{field<R>(protocol::kFrameTypeKey, &R::type, "which message this is")};
};

template <>
struct FieldTable<protocol::RequestIdOnly> {
  using R = protocol::RequestIdOnly;
  static constexpr std::string_view name = "message";
  static constexpr auto fields = std::tuple{protocol::detail::requestIdField<R>("", protocol::detail::kOptional)};
};

namespace protocol {
namespace {

template <typename Message>
Frame encodeOne(const Message& message) {
  nlohmann::json header = toJson(message);
  header.update(toJson(MessageType{std::string(FieldTable<Message>::name)}));
  return {std::move(header), {}};
}

// "run, inspect, cancel or shutdown": the types `Variant` accepts, for an unknown type's error.
template <typename Variant>
std::string typeNames() {
  std::string names;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((names += std::string(I == 0 ? "" : I + 1 == sizeof...(I) ? " or " : ", ") +
               std::string(FieldTable<std::variant_alternative_t<I, Variant>>::name)),
     ...);
  }(std::make_index_sequence<std::variant_size_v<Variant>>{});
  return names;
}

// The decoder picks a message by its type name, so the names within one direction must differ.
template <typename Variant>
constexpr bool typeNamesDiffer() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    const std::array<std::string_view, sizeof...(I)> names{FieldTable<std::variant_alternative_t<I, Variant>>::name...};
    for (std::size_t i = 0; i < names.size(); ++i)
      for (std::size_t j = i + 1; j < names.size(); ++j)
        if (names[i] == names[j]) return false;
    return true;
  }(std::make_index_sequence<std::variant_size_v<Variant>>{});
}
static_assert(typeNamesDiffer<Request>() && typeNamesDiffer<Reply>());

template <typename Variant>
Variant decodeOneOf(const Frame& frame, std::string_view streamName, std::string_view direction) {
  const std::string type = fromJson<MessageType>(frame.header, streamName).type;
  const ErrorContext where{.file = std::string(streamName), .item = type};
  // Requests and replies are all header; a payload here means the stream lost its framing.
  if (!frame.payload.empty()) throw FormatError("a message of this type carries no payload", where);
  std::optional<Variant> decoded;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto tryOne = [&]<typename Message>(std::type_identity<Message>) {
      if (FieldTable<Message>::name != type) return false;
      decoded.emplace(fromJson<Message>(frame.header, streamName));
      return true;
    };
    (tryOne(std::type_identity<std::variant_alternative_t<I, Variant>>{}) || ...);
  }(std::make_index_sequence<std::variant_size_v<Variant>>{});
  if (!decoded)
    throw FormatError("unknown " + std::string(direction) + " type '" + type + "' (" + typeNames<Variant>() + ")",
                      where);
  return std::move(*decoded);
}

}  // namespace

Frame encodeMessage(const Request& request) {
  return std::visit([](const auto& m) { return encodeOne(m); }, request);
}

Frame encodeMessage(const Reply& reply) {
  return std::visit([](const auto& m) { return encodeOne(m); }, reply);
}

Request decodeRequest(const Frame& frame, std::string_view streamName) {
  return decodeOneOf<Request>(frame, streamName, "request");
}

Reply decodeReply(const Frame& frame, std::string_view streamName) {
  return decodeOneOf<Reply>(frame, streamName, "reply");
}

RequestId requestIdOf(const Frame& frame) noexcept {
  try {
    return fromJson<RequestIdOnly>(frame.header, "").requestId;
  } catch (...) {  // a mistyped or out-of-range id, or memory: the error reply goes out without it
    return kNoRequest;
  }
}

}  // namespace protocol
}  // namespace dfi
