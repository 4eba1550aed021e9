#pragma once
// Reading one JSON object a line with errors that name the file, the line and the field: the
// shared plumbing of the format readers.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dfi/session/records.h"

namespace dfi::imports::detail {

// Where a value sits: "FILE: line N: FIELD" in every message.
struct Where {
  std::string file;
  std::size_t line = 0;
  [[noreturn]] void fail(const std::string& field, const std::string& why) const;     // FormatError
  [[noreturn]] void invalid(const std::string& field, const std::string& why) const;  // ValidationError
};

// Calls `visit` with each non-blank line parsed as a JSON object (FormatError with the line
// number otherwise).
void forEachJsonLine(const std::filesystem::path& file,
                     const std::function<void(const nlohmann::json& object, const Where& where)>& visit);

// Fields of `object` not in `known`, qualified with `prefix` ("meta_info.").
std::vector<std::string> unknownFields(const nlohmann::json& object, std::initializer_list<std::string_view> known,
                                       std::string_view prefix = {});
// Refuses the first unknown field by name (the documented formats: a misspelt field would
// otherwise be silently missing).
void refuseUnknownFields(const nlohmann::json& object, std::initializer_list<std::string_view> known,
                         const Where& where);

std::int64_t integerField(const nlohmann::json& object, std::string_view field, const Where& where,
                          std::int64_t min = 0);
std::vector<session::TokenId> tokenList(const nlohmann::json& object, std::string_view field, const Where& where);
std::vector<int> countList(const nlohmann::json& object, std::string_view field, const Where& where, int min);

}  // namespace dfi::imports::detail
