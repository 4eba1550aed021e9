#include "json_lines.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>

#include "dfi/base/error.h"

namespace dfi::imports::detail {

using nlohmann::json;

void Where::fail(const std::string& field, const std::string& why) const {
  throw FormatError(why, {.file = file, .item = "line " + std::to_string(line) + (field.empty() ? "" : ": " + field)});
}

void Where::invalid(const std::string& field, const std::string& why) const {
  throw ValidationError(why,
                        {.file = file, .item = "line " + std::to_string(line) + (field.empty() ? "" : ": " + field)});
}

void forEachJsonLine(const std::filesystem::path& file,
                     const std::function<void(const json& object, const Where& where)>& visit) {
  std::ifstream in(file);
  if (!in) throw IoError("cannot open the records file", {.file = file.string()});
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (std::ranges::all_of(text, [](unsigned char c) { return std::isspace(c); })) continue;
    const Where where{file.string(), line};
    json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded()) where.fail("", "not valid JSON");
    if (!object.is_object()) where.fail("", "expected a JSON object");
    visit(object, where);
  }
  if (in.bad()) throw IoError("read error", {.file = file.string()});
}

std::vector<std::string> unknownFields(const json& object, std::initializer_list<std::string_view> known,
                                       std::string_view prefix) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items())
    if (std::ranges::find(known, std::string_view(key)) == known.end()) out.push_back(std::string(prefix) + key);
  return out;
}

void refuseUnknownFields(const json& object, std::initializer_list<std::string_view> known, const Where& where) {
  const auto unknown = unknownFields(object, known);
  if (unknown.empty()) return;
  std::string expected;
  for (auto k : known) expected += (expected.empty() ? "" : ", ") + std::string(k);
  where.invalid(unknown.front(), "unknown field (this format has: " + expected + ")");
}

std::int64_t integerField(const json& object, std::string_view field, const Where& where, std::int64_t min) {
  const auto it = object.find(field);
  if (it == object.end()) where.fail(std::string(field), "missing");
  if (!it->is_number_integer()) where.fail(std::string(field), "expected an integer");
  const auto value = it->get<std::int64_t>();
  if (value < min) where.invalid(std::string(field), "must be at least " + std::to_string(min));
  return value;
}

std::vector<session::TokenId> tokenList(const json& object, std::string_view field, const Where& where) {
  const auto it = object.find(field);
  if (it == object.end()) where.fail(std::string(field), "missing");
  if (!it->is_array()) where.fail(std::string(field), "expected an array of token ids");
  std::vector<session::TokenId> out;
  out.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        v.get<std::int64_t>() > std::numeric_limits<session::TokenId>::max())
      where.fail(std::string(field) + "[" + std::to_string(i) + "]", "expected a token id (a non-negative integer)");
    out.push_back(v.get<session::TokenId>());
  }
  return out;
}

std::vector<int> countList(const json& object, std::string_view field, const Where& where, int min) {
  const auto it = object.find(field);
  if (it == object.end()) where.fail(std::string(field), "missing");
  if (!it->is_array()) where.fail(std::string(field), "expected an array of integers");
  std::vector<int> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > (1 << 20))
      where.fail(std::string(field) + "[" + std::to_string(i) + "]",
                 "expected an integer of at least " + std::to_string(min));
    out.push_back(v.get<int>());
  }
  return out;
}

}  // namespace dfi::imports::detail
