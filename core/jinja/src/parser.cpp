#include "parser.h"

#include <algorithm>
#include <initializer_list>

#include "compile_checks.h"
#include "expression_parser.h"

namespace dfi::jinja::detail {
namespace {

bool oneOf(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

// Statements: text, {{ }} and the tags transformers' environment knows (if, for, set, macro,
// break and continue from loopcontrols, generation), with jinja2's error wording.
class StatementParser : public ExpressionParser {
 public:
  using ExpressionParser::ExpressionParser;

  ParsedBody run() {
    Body body = subparse({});
    checkCompileTime(*this, body);
    return {std::move(lexed_.source), std::move(name_), std::move(body)};
  }

 private:
  Body subparse(std::initializer_list<const char*> endTags);
  Body parseStatements(std::initializer_list<const char*> endTags, bool dropNeedle);
  StmtPtr parseStatement();
  StmtPtr parseIf();
  void parseTargets(Stmt& s, bool withNamespace, const char* endName);
  StmtPtr parseFor();
  StmtPtr parseSet();
  StmtPtr parseMacro();

  int loopDepth_ = 0;
};

Body StatementParser::subparse(std::initializer_list<const char*> endTags) {
  DepthGuard guard(*this);
  Body body;
  while (true) {
    const Token& t = current();
    if (t.type == TokenType::End) {
      if (endTags.size() == 0) return body;
      std::string wanted;
      for (const char* tag : endTags) wanted += (wanted.empty() ? "'" : " or '") + std::string(tag) + "'";
      failAt(t.offset, "Unexpected end of template. Jinja was looking for the following tags: " + wanted + ".");
    }
    if (t.type == TokenType::Data) {
      auto s = std::make_unique<Stmt>(Stmt{StmtKind::Text, t.offset});
      s->text = next().text;
      body.push_back(std::move(s));
    } else if (t.type == TokenType::VariableBegin) {
      next();
      auto s = std::make_unique<Stmt>(Stmt{StmtKind::Print, t.offset});
      s->expr = parseTuple(true, {});
      expectType(TokenType::VariableEnd, "end of print statement");
      body.push_back(std::move(s));
    } else if (t.type == TokenType::BlockBegin) {
      next();
      if (current().type == TokenType::Name &&
          std::any_of(endTags.begin(), endTags.end(), [&](const char* e) { return current().text == e; }))
        return body;
      body.push_back(parseStatement());
      expectType(TokenType::BlockEnd, "end of statement block");
    } else {
      unexpected();
    }
  }
}

// After a statement's header: the block end, then the body up to one of endTags.
Body StatementParser::parseStatements(std::initializer_list<const char*> endTags, bool dropNeedle) {
  skipOp(":");
  expectType(TokenType::BlockEnd, "end of statement block");
  Body body = subparse(endTags);
  if (dropNeedle) next();
  return body;
}

StmtPtr StatementParser::parseStatement() {
  const Token& t = current();
  if (t.type != TokenType::Name) failAt(t.offset, "tag name expected");
  const std::string tag = t.text;
  if (tag == "if") return parseIf();
  if (tag == "for") return parseFor();
  if (tag == "set") return parseSet();
  if (tag == "macro") return parseMacro();
  if (tag == "break" || tag == "continue") {
    if (loopDepth_ == 0) failAt(t.offset, "'" + tag + "' outside of a loop");
    next();
    return std::make_unique<Stmt>(Stmt{tag == "break" ? StmtKind::Break : StmtKind::Continue, t.offset});
  }
  if (tag == "generation") {
    next();
    auto s = std::make_unique<Stmt>(Stmt{StmtKind::Generation, t.offset});
    s->body = parseStatements({"endgeneration"}, true);
    return s;
  }
  if (oneOf(tag, {"call", "filter", "with", "block", "extends", "include", "import", "from", "autoescape"}))
    failAt(t.offset, "the '" + tag + "' tag is not supported by this engine");
  failAt(t.offset, "Encountered unknown tag '" + tag + "'.");
}

StmtPtr StatementParser::parseIf() {
  auto result = std::make_unique<Stmt>(Stmt{StmtKind::If, next().offset});
  Stmt* node = result.get();
  while (true) {
    node->expr = parseTuple(false, {});
    node->body = parseStatements({"elif", "else", "endif"}, false);
    const Token& t = next();
    if (t.text == "elif") {
      auto elif = std::make_unique<Stmt>(Stmt{StmtKind::If, t.offset});
      Stmt* raw = elif.get();
      node->orElse.push_back(std::move(elif));
      node = raw;
      continue;
    }
    if (t.text == "else") node->orElse = parseStatements({"endif"}, true);
    return result;
  }
}

// Assignment targets: a name, a tuple of names, or (with namespaces) name.attribute.
void StatementParser::parseTargets(Stmt& s, bool withNamespace, const char* endName) {
  const std::size_t at = current().offset;
  if (withNamespace && current().type == TokenType::Name && look().type == TokenType::Operator && look().text == ".") {
    s.text = next().text;
    next();
    s.attribute = expectName();
    return;
  }
  bool parenthesized = skipOp("(");
  while (true) {
    if (current().type != TokenType::Name || oneOf(current().text, {"true", "false", "True", "False", "none", "None"}))
      failAt(at, "can't assign to this expression (only names and flat tuples of names)");
    s.targets.push_back(next().text);
    if (!skipOp(",")) break;
    s.unpack = true;
    if ((endName && isName(endName)) || isOp(")") || isOp("=") || current().type == TokenType::BlockEnd) break;
  }
  if (parenthesized) {
    expectOp(")");
    s.unpack = true;
  }
}

StmtPtr StatementParser::parseFor() {
  auto s = std::make_unique<Stmt>(Stmt{StmtKind::For, next().offset});
  parseTargets(*s, false, "in");
  if (!skipName("in")) failAt(current().offset, "expected token 'in', got '" + describe(current()) + "'");
  s->expr = parseTuple(false, {"recursive"});
  if (skipName("if")) s->filter = parseExpression(true);
  if (isName("recursive")) failAt(current().offset, "recursive loops are not supported by this engine");
  ++loopDepth_;
  s->body = parseStatements({"endfor", "else"}, false);
  --loopDepth_;
  if (next().text == "else") s->orElse = parseStatements({"endfor"}, true);
  s->readsLoop = mentionsLoop(s->filter.get()) || mentionsLoop(s->body);
  s->definesMacro = definesMacro(s->body);
  return s;
}

StmtPtr StatementParser::parseSet() {
  auto s = std::make_unique<Stmt>(Stmt{StmtKind::Set, next().offset});
  parseTargets(*s, true, nullptr);
  if (skipOp("=")) {
    s->expr = parseTuple(true, {});
    return s;
  }
  if (!s->attribute.empty()) failAt(s->offset, "a block set cannot assign a namespace attribute");
  s->kind = StmtKind::SetBlock;
  if (isOp("|")) s->filter = parseFilters(nullptr);
  s->body = parseStatements({"endset"}, true);
  return s;
}

StmtPtr StatementParser::parseMacro() {
  auto s = std::make_unique<Stmt>(Stmt{StmtKind::Macro, next().offset});
  s->text = expectName();
  expectOp("(");
  bool sawDefault = false;
  while (!isOp(")")) {
    if (!s->parameters.empty()) expectOp(",");
    const std::size_t at = current().offset;
    std::string param = expectName();
    ExprPtr def;
    if (skipOp("=")) {
      def = parseExpression(true);
      sawDefault = true;
    } else if (sawDefault) {
      failAt(at, "non-default argument follows default argument");
    }
    s->parameters.emplace_back(std::move(param), std::move(def));
  }
  expectOp(")");
  const int savedLoops = loopDepth_;
  loopDepth_ = 0;
  s->body = parseStatements({"endmacro"}, true);
  loopDepth_ = savedLoops;
  return s;
}

}  // namespace

ParsedBody parseTemplate(LexedTemplate lexed, std::string sourceName) {
  return StatementParser(std::move(lexed), std::move(sourceName)).run();
}

}  // namespace dfi::jinja::detail
