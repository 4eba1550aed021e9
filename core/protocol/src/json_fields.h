#pragma once
// Reads typed fields out of a JSON object and turns every mismatch into a dfi::FormatError
// that names the stream and the field ("step.draft_tokens: expected an array of integers").

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"

namespace dfi::protocol::detail {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string_view streamName, std::string recordType)
      : object_(object), streamName_(streamName), recordType_(std::move(recordType)) {}

  template <typename T>
  T get(const char* field) const {
    const auto it = object_.find(field);
    if (it == object_.end()) fail(field, "missing");
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception& e) {
      fail(field, std::string("wrong type: ") + e.what());
    }
  }

  template <typename T>
  T getOr(const char* field, T fallback) const {
    return object_.contains(field) ? get<T>(field) : fallback;
  }

  [[noreturn]] void fail(const char* field, const std::string& why) const {
    throw FormatError(why, {.file = std::string(streamName_), .item = recordType_ + "." + field});
  }

 private:
  const nlohmann::json& object_;
  std::string_view streamName_;
  std::string recordType_;
};

}  // namespace dfi::protocol::detail
