#pragma once
// What jinja2 checks when it compiles a template, and what the interpreter needs to know about
// a loop body before running it.

#include "ast.h"
#include "token_stream.h"

namespace dfi::jinja::detail {

// Unknown filters and tests are errors, except inside an if statement or a conditional
// expression, where jinja2 defers them to run time (they are marked deferredUnknown). Filters
// jinja2 has but this engine does not implement are errors everywhere.
void checkCompileTime(const TokenStream& stream, Body& body);

bool mentionsLoop(const Expr* e);
bool mentionsLoop(const Body& body);
bool definesMacro(const Body& body);

}  // namespace dfi::jinja::detail
