#include "expression_parser.h"

#include <algorithm>

#include "builtins.h"

namespace dfi::jinja::detail {

namespace {

bool oneOf(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

}  // namespace

ExprPtr ExpressionParser::make(ExprKind kind, std::size_t offset) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->offset = offset;
  return e;
}

ExprPtr ExpressionParser::make(ExprKind kind, std::size_t offset, ExprPtr a, ExprPtr b) {
  auto e = make(kind, offset);
  e->operands.push_back(std::move(a));
  if (b) e->operands.push_back(std::move(b));
  return e;
}

bool ExpressionParser::isTupleEnd(std::initializer_list<const char*> extraEnd) const {
  const Token& t = current();
  if (t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd || t.type == TokenType::End) return true;
  if (t.type == TokenType::Operator && t.text == ")") return true;
  return t.type == TokenType::Name && std::any_of(extraEnd.begin(), extraEnd.end(), [&](const char* n) { return t.text == n; });
}

ExprPtr ExpressionParser::parseTuple(bool withCondexpr, std::initializer_list<const char*> extraEnd, bool explicitParens) {
  const std::size_t at = current().offset;
  std::vector<ExprPtr> items;
  bool isTuple = false;
  while (true) {
    if (!items.empty()) expectOp(",");
    if (isTupleEnd(extraEnd)) break;
    items.push_back(parseExpression(withCondexpr));
    if (isOp(",")) isTuple = true;
    else break;
  }
  if (!isTuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicitParens) failAt(current().offset, "Expected an expression, got '" + describe(current()) + "'");
  }
  auto e = make(ExprKind::Tuple, at);
  e->operands = std::move(items);
  return e;
}

ExprPtr ExpressionParser::parseExpression(bool withCondexpr) {
  DepthGuard guard(*this);
  return withCondexpr ? parseConditional() : parseOr();
}

ExprPtr ExpressionParser::parseConditional() {
  const std::size_t at = current().offset;
  ExprPtr expr = parseOr();
  while (skipName("if")) {
    auto cond = make(ExprKind::Conditional, at);
    cond->operands.push_back(parseOr());
    cond->operands.push_back(std::move(expr));
    cond->operands.push_back(skipName("else") ? parseConditional() : nullptr);
    expr = std::move(cond);
  }
  return expr;
}

ExprPtr ExpressionParser::parseOr() {
  ExprPtr left = parseAnd();
  while (isName("or")) {
    const std::size_t at = next().offset;
    left = make(ExprKind::Or, at, std::move(left), parseAnd());
  }
  return left;
}

ExprPtr ExpressionParser::parseAnd() {
  ExprPtr left = parseNot();
  while (isName("and")) {
    const std::size_t at = next().offset;
    left = make(ExprKind::And, at, std::move(left), parseNot());
  }
  return left;
}

ExprPtr ExpressionParser::parseNot() {
  if (isName("not")) {
    DepthGuard guard(*this);
    const std::size_t at = next().offset;
    return make(ExprKind::Not, at, parseNot());
  }
  return parseCompare();
}

ExprPtr ExpressionParser::parseCompare() {
  const std::size_t at = current().offset;
  ExprPtr first = parseMath1();
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (current().type == TokenType::Operator && oneOf(current().text, {"==", "!=", "<", "<=", ">", ">="})) {
      op = next().text;
    } else if (skipName("in")) {
      op = "in";
    } else if (isName("not") && look().type == TokenType::Name && look().text == "in") {
      next();
      next();
      op = "not in";
    } else {
      break;
    }
    if (!cmp) {
      cmp = make(ExprKind::Compare, at);
      cmp->operands.push_back(std::move(first));
    }
    cmp->ops.push_back(op);
    cmp->operands.push_back(parseMath1());
  }
  return cmp ? std::move(cmp) : std::move(first);
}

ExprPtr ExpressionParser::parseBinaryLevel(std::initializer_list<const char*> ops, ExprPtr (ExpressionParser::*operand)()) {
  ExprPtr left = (this->*operand)();
  while (current().type == TokenType::Operator && oneOf(current().text, ops)) {
    const Token& t = next();
    auto e = make(ExprKind::Binary, t.offset, std::move(left), (this->*operand)());
    e->name = t.text;
    left = std::move(e);
  }
  return left;
}

ExprPtr ExpressionParser::parseMath1() { return parseBinaryLevel({"+", "-"}, &ExpressionParser::parseConcat); }
ExprPtr ExpressionParser::parseConcat() { return parseBinaryLevel({"~"}, &ExpressionParser::parseMath2); }
ExprPtr ExpressionParser::parseMath2() { return parseBinaryLevel({"*", "/", "//", "%"}, &ExpressionParser::parsePow); }
ExprPtr ExpressionParser::parsePow() { return parseBinaryLevel({"**"}, &ExpressionParser::parseUnaryWithFilters); }
ExprPtr ExpressionParser::parseUnaryWithFilters() { return parseUnary(true); }
ExprPtr ExpressionParser::parseUnary(bool withFilter) {
  DepthGuard guard(*this);
  ExprPtr node;
  if (isOp("-") || isOp("+")) {
    const Token& t = next();
    node = make(t.text == "-" ? ExprKind::Negate : ExprKind::Plus, t.offset, parseUnary(false));
  } else {
    node = parsePrimary();
  }
  node = parsePostfix(std::move(node));
  return withFilter ? parseFilterExpr(std::move(node)) : std::move(node);
}

ExprPtr ExpressionParser::parsePrimary() {
  DepthGuard guard(*this);
  const Token& t = current();
  if (t.type == TokenType::Name) {
    next();
    if (oneOf(t.text, {"true", "True", "false", "False"}))
      return literal(Value::boolean(t.text == "true" || t.text == "True"), t.offset);
    if (oneOf(t.text, {"none", "None"})) return literal(Value::none(), t.offset);
    auto e = make(ExprKind::Name, t.offset);
    e->name = t.text;
    return e;
  }
  if (t.type == TokenType::String) {
    std::string text;
    while (current().type == TokenType::String) text += next().text;
    return literal(Value::string(std::move(text)), t.offset);
  }
  if (t.type == TokenType::Integer) return literal(Value::integer(next().integer), t.offset);
  if (t.type == TokenType::Float) return literal(Value::floating(next().floating), t.offset);
  if (skipOp("(")) {
    ExprPtr e = parseTuple(true, {}, true);
    expectOp(")");
    return e;
  }
  if (isOp("[") || isOp("{")) {
    const bool isDict = isOp("{");
    next();
    const char* close = isDict ? "}" : "]";
    auto e = make(isDict ? ExprKind::Dict : ExprKind::List, t.offset);
    while (!isOp(close)) {
      if (!e->operands.empty()) expectOp(",");
      if (isOp(close)) break;
      e->operands.push_back(parseExpression(true));
      if (isDict) {
        expectOp(":");
        e->operands.push_back(parseExpression(true));
      }
    }
    expectOp(close);
    return e;
  }
  unexpected();
}

ExprPtr ExpressionParser::literal(Value v, std::size_t offset) {
  auto e = make(ExprKind::Literal, offset);
  e->value = std::move(v);
  return e;
}

ExprPtr ExpressionParser::parsePostfix(ExprPtr node) {
  while (true) {
    if (isOp(".") || isOp("[")) node = parseSubscript(std::move(node));
    else if (isOp("(")) node = parseCall(std::move(node));
    else return node;
  }
}

ExprPtr ExpressionParser::parseFilterExpr(ExprPtr node) {
  while (true) {
    if (isOp("|")) node = parseFilters(std::move(node));
    else if (isName("is")) node = parseTest(std::move(node));
    else if (isOp("(")) node = parseCall(std::move(node));
    else return node;
  }
}

ExprPtr ExpressionParser::parseSubscript(ExprPtr node) {
  DepthGuard guard(*this);
  const Token& t = next();
  if (t.text == ".") {
    const Token& attr = next();
    if (attr.type == TokenType::Name) {
      auto e = make(ExprKind::GetAttr, t.offset, std::move(node));
      e->name = attr.text;
      return e;
    }
    if (attr.type != TokenType::Integer) failAt(attr.offset, "expected name or number");
    return make(ExprKind::GetItem, t.offset, std::move(node), literal(Value::integer(attr.integer), attr.offset));
  }
  std::vector<ExprPtr> args;
  while (!isOp("]")) {
    if (!args.empty()) expectOp(",");
    args.push_back(parseSubscribed(node));
  }
  expectOp("]");
  if (args.size() != 1) {
    auto tuple = make(ExprKind::Tuple, t.offset);
    tuple->operands = std::move(args);
    return make(ExprKind::GetItem, t.offset, std::move(node), std::move(tuple));
  }
  if (args[0] && args[0]->kind == ExprKind::Slice && !args[0]->operands[0]) {
    args[0]->operands[0] = std::move(node);
    return std::move(args[0]);
  }
  return make(ExprKind::GetItem, t.offset, std::move(node), std::move(args[0]));
}

// One subscript: an expression, or a slice start:stop:step (its object filled in later).
ExprPtr ExpressionParser::parseSubscribed(const ExprPtr&) {
  const std::size_t at = current().offset;
  ExprPtr start;
  if (!isOp(":")) {
    start = parseExpression(true);
    if (!isOp(":")) return start;
  }
  next();
  auto slice = make(ExprKind::Slice, at);
  slice->operands.push_back(nullptr);
  slice->operands.push_back(std::move(start));
  slice->operands.push_back(isOp("]") || isOp(",") || isOp(":") ? nullptr : parseExpression(true));
  ExprPtr step;
  if (skipOp(":") && !isOp("]") && !isOp(",")) step = parseExpression(true);
  slice->operands.push_back(std::move(step));
  return slice;
}

void ExpressionParser::parseCallArgs(Expr& e) {
  const std::size_t at = current().offset;
  expectOp("(");
  bool requireComma = false;
  while (!isOp(")")) {
    if (requireComma) {
      expectOp(",");
      if (isOp(")")) break;
    }
    if (isOp("*") || isOp("**")) failAt(current().offset, "*args and **kwargs in calls are not supported by this engine");
    if (current().type == TokenType::Name && look().type == TokenType::Operator && look().text == "=") {
      std::string key = next().text;
      next();
      e.keywords.emplace_back(std::move(key), parseExpression(true));
    } else {
      if (!e.keywords.empty()) failAt(at, "invalid syntax for function call expression");
      e.operands.push_back(parseExpression(true));
    }
    requireComma = true;
  }
  expectOp(")");
}

ExprPtr ExpressionParser::parseCall(ExprPtr node) {
  DepthGuard guard(*this);
  auto e = make(ExprKind::Call, current().offset, std::move(node));
  parseCallArgs(*e);
  return e;
}

ExprPtr ExpressionParser::parseFilters(ExprPtr node) {
  while (skipOp("|")) {
    DepthGuard guard(*this);
    const std::size_t at = current().offset;
    auto e = make(ExprKind::Filter, at);
    e->operands.push_back(std::move(node));
    e->name = expectName();
    while (skipOp(".")) e->name += "." + expectName();
    if (isOp("(")) parseCallArgs(*e);
    node = std::move(e);
  }
  return node;
}

ExprPtr ExpressionParser::parseTest(ExprPtr node) {
  DepthGuard guard(*this);
  const std::size_t at = next().offset;
  const bool negated = skipName("not");
  auto e = make(ExprKind::Test, at, std::move(node));
  e->name = expectName();
  while (skipOp(".")) e->name += "." + expectName();
  const Token& t = current();
  if (isOp("(")) {
    parseCallArgs(*e);
  } else if ((t.type == TokenType::Name || t.type == TokenType::String || t.type == TokenType::Integer ||
              t.type == TokenType::Float || isOp("[") || isOp("{")) &&
             !(t.type == TokenType::Name && oneOf(t.text, {"else", "or", "and"}))) {
    if (isName("is")) failAt(t.offset, "You cannot chain multiple tests with is");
    e->operands.push_back(parsePostfix(parsePrimary()));
  }
  return negated ? make(ExprKind::Not, at, std::move(e)) : std::move(e);
}

}  // namespace dfi::jinja::detail
