#pragma once
// Expressions with jinja2's grammar and precedence: conditional, or, and, not, comparisons,
// + -, ~, * / // %, **, unary - +, then postfix (.attr, [item], [a:b:c], calls), filters and
// tests, which bind tighter than any operator.

#include <initializer_list>

#include "ast.h"
#include "token_stream.h"

namespace dfi::jinja::detail {

class ExpressionParser : public TokenStream {
 public:
  using TokenStream::TokenStream;

  ExprPtr make(ExprKind kind, std::size_t offset);
  ExprPtr make(ExprKind kind, std::size_t offset, ExprPtr a, ExprPtr b = nullptr);
  bool isTupleEnd(std::initializer_list<const char*> extraEnd) const;
  ExprPtr parseTuple(bool withCondexpr, std::initializer_list<const char*> extraEnd, bool explicitParens = false);
  ExprPtr parseExpression(bool withCondexpr);
  ExprPtr parseConditional();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseCompare();
  ExprPtr parseBinaryLevel(std::initializer_list<const char*> ops, ExprPtr (ExpressionParser::*operand)());
  ExprPtr parseMath1();
  ExprPtr parseConcat();
  ExprPtr parseMath2();
  ExprPtr parsePow();
  ExprPtr parseUnaryWithFilters();
  ExprPtr parseUnary(bool withFilter);
  ExprPtr parsePrimary();
  ExprPtr literal(Value v, std::size_t offset);
  ExprPtr parsePostfix(ExprPtr node);
  ExprPtr parseFilterExpr(ExprPtr node);
  ExprPtr parseSubscript(ExprPtr node);
  ExprPtr parseSubscribed(const ExprPtr&);
  void parseCallArgs(Expr& e);
  ExprPtr parseCall(ExprPtr node);
  ExprPtr parseFilters(ExprPtr node);
  ExprPtr parseTest(ExprPtr node);
};

}  // namespace dfi::jinja::detail
