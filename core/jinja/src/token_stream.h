#pragma once
// The parser's view of the tokens: lookahead, expectations with jinja2's error wording, and the
// nesting bound that keeps a hostile template from overflowing the stack while parsing.

#include <string>

#include "failure.h"
#include "lexer.h"

namespace dfi::jinja::detail {

class TokenStream {
 public:
  TokenStream(LexedTemplate lexed, std::string sourceName) : lexed_(std::move(lexed)), name_(std::move(sourceName)) {}

  LexedTemplate& lexed() { return lexed_; }
  std::string& sourceName() { return name_; }

  const Token& current() const { return lexed_.tokens[pos_]; }
  const Token& look() const { return lexed_.tokens[std::min(pos_ + 1, lexed_.tokens.size() - 1)]; }
  const Token& next() {
    const Token& t = lexed_.tokens[pos_];
    if (pos_ + 1 < lexed_.tokens.size()) ++pos_;
    return t;
  }
  bool isOp(const char* op) const { return current().type == TokenType::Operator && current().text == op; }
  bool isName(const char* n) const { return current().type == TokenType::Name && current().text == n; }
  bool skipOp(const char* op) {
    if (!isOp(op)) return false;
    next();
    return true;
  }
  bool skipName(const char* n) {
    if (!isName(n)) return false;
    next();
    return true;
  }

  std::string describe(const Token& t) const {
    switch (t.type) {
      case TokenType::End: return "end of template";
      case TokenType::BlockEnd: return "end of statement block";
      case TokenType::VariableEnd: return "end of print statement";
      case TokenType::BlockBegin: return "begin of statement block";
      case TokenType::VariableBegin: return "begin of print statement";
      case TokenType::Data: return "template data";
      case TokenType::String: return "string";
      case TokenType::Integer: case TokenType::Float: return "number";
      default: return t.text;
    }
  }

  [[noreturn]] void failAt(std::size_t offset, const std::string& message) const {
    throwSyntaxError(name_, lexed_.source, offset, message);
  }
  [[noreturn]] void unexpected() const { failAt(current().offset, "unexpected '" + describe(current()) + "'"); }

  void expectOp(const char* op) {
    if (!skipOp(op)) failAt(current().offset, std::string("expected token '") + op + "', got '" + describe(current()) + "'");
  }
  void expectType(TokenType type, const char* what) {
    if (current().type != type) failAt(current().offset, std::string("expected token '") + what + "', got '" + describe(current()) + "'");
    next();
  }
  std::string expectName() {
    if (current().type != TokenType::Name) failAt(current().offset, "expected token 'name', got '" + describe(current()) + "'");
    return next().text;
  }

  // Bounds recursion so that deeply nested input fails cleanly instead of overflowing the stack.
  struct DepthGuard {
    TokenStream& p;
    explicit DepthGuard(TokenStream& parser) : p(parser) {
      if (++p.depth_ > kMaxNesting) p.failAt(p.current().offset, "template nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };


 protected:
  LexedTemplate lexed_;
  std::string name_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace dfi::jinja::detail
