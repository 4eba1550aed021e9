#include "config_json.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "dfi/base/error.h"

namespace dfi::modelspec::detail {

void ProblemList::add(std::string field, std::string message) {
  problems_.push_back({std::move(field), std::move(message)});
}

void ProblemList::throwIfAny(const std::string& file) const {
  if (!problems_.empty()) throw ConfigValidationError(file, problems_);
}

nlohmann::json parseConfigJson(std::string_view text, const std::string& origin) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(std::string("not valid JSON: ") + e.what(),
                      ErrorContext{.file = origin, .byteOffset = e.byte});
  } catch (const nlohmann::json::exception& e) {  // a number too large for a double
    throw FormatError(std::string("not valid JSON: ") + e.what(), ErrorContext{.file = origin});
  }
  if (!root.is_object())
    throw FormatError("a config must be a JSON object, found " + std::string(root.type_name()),
                      ErrorContext{.file = origin});
  return root;
}

std::string readConfigFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open config file", ErrorContext{.file = path.string()});
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError("cannot read config file", ErrorContext{.file = path.string()});
  return text.str();
}

std::string showJson(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  constexpr std::size_t kMaxShown = 80;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

ConfigObject::ConfigObject(const nlohmann::json& object, std::string path, ProblemList& problems)
    : object_(&object), path_(std::move(path)), problems_(&problems) {}

std::string ConfigObject::pathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const nlohmann::json* ConfigObject::find(std::string_view key) const {
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool ConfigObject::has(std::string_view key) const { return find(key) != nullptr; }

void ConfigObject::wrongType(std::string_view key, const char* expected,
                             const nlohmann::json& value) const {
  problems_->add(pathOf(key), std::string("expected ") + expected + ", found " +
                                  value.type_name() + " " + showJson(value));
}

namespace {

// An integral JSON number that fits an int; floats such as 4096.0 are refused because
// transformers' strict config classes refuse them too.
std::optional<int> asInt(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return std::nullopt;
    return static_cast<int>(v);
  }
  if (value.is_number_integer()) {
    auto v = value.get<std::int64_t>();
    if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min())
      return std::nullopt;
    return static_cast<int>(v);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> ConfigObject::optionalInt(std::string_view key, int minValue, int maxValue) const {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  std::optional<int> v = asInt(*value);
  if (!v) {
    wrongType(key, "an integer that fits 32 bits", *value);
    return std::nullopt;
  }
  if (*v < minValue) {
    problems_->add(pathOf(key), "must be at least " + std::to_string(minValue) + ", found " +
                                    std::to_string(*v));
    return std::nullopt;
  }
  if (*v > maxValue) {
    problems_->add(pathOf(key), "must be at most " + std::to_string(maxValue) + ", found " +
                                    std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<int> ConfigObject::requiredInt(std::string_view key, int minValue, int maxValue) const {
  if (!has(key)) {
    problems_->add(pathOf(key), "required field is missing");
    return std::nullopt;
  }
  return optionalInt(key, minValue, maxValue);
}

std::optional<double> ConfigObject::optionalNumber(std::string_view key) const {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_number()) {
    wrongType(key, "a number", *value);
    return std::nullopt;
  }
  return value->get<double>();
}

std::optional<bool> ConfigObject::optionalBool(std::string_view key) const {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_boolean()) {
    wrongType(key, "true or false", *value);
    return std::nullopt;
  }
  return value->get<bool>();
}

std::optional<std::string> ConfigObject::optionalString(std::string_view key) const {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_string()) {
    wrongType(key, "a string", *value);
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<std::vector<int>> ConfigObject::optionalIntList(std::string_view key,
                                                              int minValue) const {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_array()) {
    if (std::optional<int> single = optionalInt(key, minValue)) return std::vector<int>{*single};
    return std::nullopt;
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < value->size(); ++i) {
    std::optional<int> v = asInt((*value)[i]);
    std::string where = pathOf(key) + "[" + std::to_string(i) + "]";
    if (!v) {
      problems_->add(where, "expected an integer, found " + showJson((*value)[i]));
      return std::nullopt;
    }
    if (*v < minValue) {
      problems_->add(where, "must be at least " + std::to_string(minValue) + ", found " +
                                std::to_string(*v));
      return std::nullopt;
    }
    out.push_back(*v);
  }
  return out;
}

std::optional<std::vector<std::string>> ConfigObject::optionalStringList(
    std::string_view key) const {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_array()) {
    wrongType(key, "a list of strings", *value);
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value->size(); ++i) {
    if (!(*value)[i].is_string()) {
      problems_->add(pathOf(key) + "[" + std::to_string(i) + "]",
                     "expected a string, found " + showJson((*value)[i]));
      return std::nullopt;
    }
    out.push_back((*value)[i].get<std::string>());
  }
  return out;
}

std::optional<ConfigObject> ConfigObject::optionalObject(std::string_view key) const {
  const nlohmann::json* value = find(key);
  if (!value) return std::nullopt;
  if (!value->is_object()) {
    wrongType(key, "an object", *value);
    return std::nullopt;
  }
  return ConfigObject(*value, pathOf(key), *problems_);
}

}  // namespace dfi::modelspec::detail
