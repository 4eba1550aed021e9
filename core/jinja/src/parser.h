#pragma once
// Builds the syntax tree from tokens with jinja2's grammar and precedence, and applies jinja2's
// compile-time checks (unknown tags, filters and tests, break outside a loop).

#include <string>

#include "ast.h"
#include "lexer.h"

namespace dfi::jinja::detail {

// Throws TemplateSyntaxError.
ParsedBody parseTemplate(LexedTemplate lexed, std::string sourceName);

}  // namespace dfi::jinja::detail
