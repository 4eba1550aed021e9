#pragma once
// Python's printf-style string formatting (format % args), which jinja2 applies for the `%`
// operator on strings and the `format` filter.

#include <string>

#include "value.h"

namespace dfi::jinja::detail {

// args: a tuple (positional), a dict (for %(name)s), or any single value.
std::string percentFormat(const std::string& format, const Value& args);

}  // namespace dfi::jinja::detail
