#pragma once
// The Python methods of str, dict and list that the sandbox allows templates to call.

#include <string>

#include "value.h"

namespace dfi::jinja::detail {

// A callable bound to `object` that runs method `name` (which must be a method of its type).
Value boundMethod(const Value& object, const std::string& name);

// Argument access shared by methods, filters and globals: positional index or keyword name.
const Value* argument(const CallArgs& args, std::size_t index, const char* keyword);
void expectArgumentCount(const CallArgs& args, std::size_t most, const std::string& what);
std::string stringArgument(const Value& v, const std::string& what);

// str.split / rsplit with Python's rules (no separator: runs of whitespace).
ValueList splitString(const std::string& text, const Value& separator, std::int64_t maxSplit, bool fromRight);
// str.splitlines() (without keepends).
std::vector<std::string> splitLines(const std::string& text);

}  // namespace dfi::jinja::detail
