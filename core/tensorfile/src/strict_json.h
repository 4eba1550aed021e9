#pragma once
// A JSON object parser that rejects what nlohmann::json silently accepts: duplicate keys (the
// DOM parser keeps the last one) and unbounded nesting. safetensors headers and checkpoint
// indexes are read with it, so every error names the file, the key path and the byte offset.

#include <cstdint>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dfi::tensorfile::detail {

struct JsonMember {
  std::string key;
  std::uint64_t offset;  // of the key's opening quote, in the caller's coordinates
  nlohmann::json value;
  // When `value` is an object and StrictJsonOptions::recordChildKeys is set: its keys, in
  // document order, with their offsets (nlohmann::json keeps neither).
  std::vector<std::pair<std::string, std::uint64_t>> childKeys;
};

struct StrictJsonOptions {
  std::string file;              // named in errors
  std::uint64_t baseOffset = 0;  // where `text` starts inside `file`
  std::size_t maxDepth = 8;      // the top-level object has depth 1
  bool recordChildKeys = false;
};

// Parses `text`, which must hold exactly one JSON object, and returns its members in the
// order they appear. Throws dfi::FormatError (item: the slash-joined key path) on bad JSON,
// a duplicate key at any depth, a top level that is not an object, or nesting deeper than
// maxDepth.
std::vector<JsonMember> parseStrictJsonObject(std::string_view text, const StrictJsonOptions& options);

}  // namespace dfi::tensorfile::detail
