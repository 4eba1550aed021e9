#pragma once
// Python's view of text, which jinja2 inherits: strings are sequences of code points (len,
// indexing, slicing count characters, not bytes), whitespace is Unicode whitespace
// (str.isspace), and numbers print the way repr() prints them.

#include <cstdint>
#include <string>
#include <string_view>

namespace dfi::jinja::detail {

bool isPythonSpace(char32_t c);

std::u32string toCodePoints(std::string_view utf8);
std::string toUtf8(std::u32string_view text);
std::size_t codePointCount(std::string_view utf8);

// str.strip / lstrip / rstrip: with no `chars`, Unicode whitespace.
enum class StripSide { Both, Left, Right };
std::string pythonStrip(std::string_view text, StripSide side, const std::u32string* chars = nullptr);

// str.lower / str.upper / str.title / str.capitalize (simple case mapping).
std::string pythonLower(std::string_view text);
std::string pythonUpper(std::string_view text);
std::string pythonTitle(std::string_view text);
std::string pythonCapitalize(std::string_view text);

// repr(float), e.g. 1.0, 0.1, 1e-05, 1.5e+20, inf, nan.
std::string floatRepr(double value);
// repr(str): quoted with ' (or " when the text has ' but no "), escaping what Python escapes.
std::string stringRepr(std::string_view text);
// json.dumps of a string, with ensure_ascii as given.
void appendJsonString(std::string_view text, bool ensureAscii, std::string& out);

}  // namespace dfi::jinja::detail
