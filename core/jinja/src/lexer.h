#pragma once
// Splits template text into tokens exactly as jinja2's lexer does with trim_blocks and
// lstrip_blocks on: newlines normalized to \n, one trailing newline dropped, '-' and '+'
// whitespace control on tags, comments dropped, {% raw %} kept as text.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dfi::jinja::detail {

enum class TokenType { Data, VariableBegin, VariableEnd, BlockBegin, BlockEnd, Name, String, Integer, Float, Operator, End };

struct Token {
  TokenType type;
  std::string text;  // data, name, operator, or the decoded string literal
  std::int64_t integer = 0;
  double floating = 0;
  std::size_t offset = 0;  // into the normalized source
};

struct LexedTemplate {
  std::string source;  // newlines normalized; offsets point here
  std::vector<Token> tokens;
};

// Throws TemplateSyntaxError (via the locator) on malformed text.
LexedTemplate lex(std::string_view text, const std::string& sourceName);

// "name:line:column" for an offset into a normalized source; the column counts characters.
std::string describeLocation(const std::string& source, std::size_t offset, int& line, int& column);
[[noreturn]] void throwSyntaxError(const std::string& sourceName, const std::string& source, std::size_t offset,
                                   const std::string& message);

}  // namespace dfi::jinja::detail
