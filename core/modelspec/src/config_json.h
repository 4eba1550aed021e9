#pragma once
// Internal: typed access to one JSON object of a config file. Every accessor knows the
// JSON path of the field it reads, and records a problem (instead of throwing) when a value
// has the wrong type or range, so parsing reports all problems at once.

#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dfi/modelspec/config_error.h"

namespace dfi::modelspec::detail {

class ProblemList {
 public:
  void add(std::string field, std::string message);
  bool empty() const { return problems_.empty(); }
  // Throws ConfigValidationError listing every problem, if there is any.
  void throwIfAny(const std::string& file) const;

 private:
  std::vector<ConfigProblem> problems_;
};

// Parses config text; FormatError (with byte offset) when it is not a JSON object.
nlohmann::json parseConfigJson(std::string_view text, const std::string& origin);
std::string readConfigFile(const std::filesystem::path& path);

class ConfigObject {
 public:
  // `path` is the JSON path of this object ("" for the root).
  ConfigObject(const nlohmann::json& object, std::string path, ProblemList& problems);

  // JSON path of a field of this object, e.g. "text_config.hidden_size".
  std::string pathOf(std::string_view key) const;
  // Present and not null: Python writes null for unset optional fields.
  bool has(std::string_view key) const;
  ProblemList& problems() const { return *problems_; }

  // Absent or null -> nullopt; wrong type or outside [minValue, maxValue] -> problem, nullopt.
  std::optional<int> optionalInt(std::string_view key, int minValue,
                                 int maxValue = std::numeric_limits<int>::max()) const;
  // Absent -> problem "required".
  std::optional<int> requiredInt(std::string_view key, int minValue,
                                 int maxValue = std::numeric_limits<int>::max()) const;
  std::optional<double> optionalNumber(std::string_view key) const;
  std::optional<bool> optionalBool(std::string_view key) const;
  std::optional<std::string> optionalString(std::string_view key) const;
  // A list of integers >= minValue; a bare integer counts as a one-element list
  // (eos_token_id is written both ways).
  std::optional<std::vector<int>> optionalIntList(std::string_view key, int minValue) const;
  std::optional<std::vector<std::string>> optionalStringList(std::string_view key) const;
  // A nested object; a present non-object is a problem.
  std::optional<ConfigObject> optionalObject(std::string_view key) const;
  const nlohmann::json& json() const { return *object_; }

 private:
  const nlohmann::json* find(std::string_view key) const;
  void wrongType(std::string_view key, const char* expected, const nlohmann::json& value) const;

  const nlohmann::json* object_;
  std::string path_;
  ProblemList* problems_;
};

// Compact rendering of a JSON value for messages (long values are shortened).
std::string showJson(const nlohmann::json& value);

}  // namespace dfi::modelspec::detail
