#pragma once
// transformers' tojson filter: json.dumps(value, ensure_ascii, indent, separators, sort_keys),
// byte for byte (Python's float repr, its key coercion and its indentation layout).

#include <optional>
#include <string>

#include "value.h"

namespace dfi::jinja::detail {

struct JsonDumpOptions {
  bool ensureAscii = false;
  std::optional<std::string> indent;  // None: one line
  std::optional<std::string> itemSeparator, keySeparator;
  bool sortKeys = false;
};

std::string jsonDumps(const Value& v, const JsonDumpOptions& options);

}  // namespace dfi::jinja::detail
