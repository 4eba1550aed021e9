#pragma once
// The names a template reads from its caller (Template::variables()).

#include <string>
#include <vector>

#include "ast.h"

namespace dfi::jinja::detail {

std::vector<std::string> readVariables(const Body& body);

}  // namespace dfi::jinja::detail
