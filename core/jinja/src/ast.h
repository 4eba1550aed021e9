#pragma once
// The syntax tree the parser builds and the interpreter walks. Nodes keep the offset of their
// first token in the normalized source, so every error can name line and column.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "value.h"

namespace dfi::jinja::detail {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  Literal,    // value
  Name,       // name
  List, Tuple, Dict,  // operands (Dict: key, value, key, value...)
  GetAttr,    // operands[0] . name
  GetItem,    // operands[0] [ operands[1] ]
  Slice,      // operands[0] [ start : stop : step ], missing parts are null
  Call,       // operands[0] ( operands[1..], keywords )
  Filter,     // operands[0] | name ( operands[1..], keywords ); operands[0] null in a set block
  Test,       // operands[0] is name ( operands[1..], keywords )
  Not, Negate, Plus,  // operands[0]
  Binary,     // operands[0] op operands[1]: + - * / // % ** ~
  Compare,    // operands[0] ops[0] operands[1] ops[1] operands[2] ...
  And, Or,    // operands[0], operands[1]
  Conditional,  // operands[1] if operands[0] else operands[2] (null: undefined)
};

struct Expr {
  ExprKind kind;
  std::size_t offset = 0;
  Value value;
  std::string name;  // Name, attribute, filter or test, binary operator
  std::vector<ExprPtr> operands;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  std::vector<std::string> ops;  // Compare
  bool deferredUnknown = false;  // Filter/Test that jinja2 only rejects when it runs
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
  Text,        // text
  Print,       // expr
  If,          // expr, body, orElse (an elif is an If alone in orElse)
  For,         // targets in expr [if filter], body, orElse
  Set,         // targets = expr, or namespaceName.attribute = expr
  SetBlock,    // targets = rendered body, through filter (a Filter chain on a null operand)
  Macro,       // name(parameters) body
  Break, Continue,
  Generation,  // transformers' {% generation %}: renders its body
};

struct Stmt {
  StmtKind kind;
  std::size_t offset = 0;
  std::string text;  // Text; Macro name; Set on a namespace: the namespace variable
  std::string attribute;  // Set on a namespace
  std::vector<std::string> targets;
  bool unpack = false;  // targets written as a tuple
  bool readsLoop = false;  // For: the body or filter mentions `loop` (else it is not built)
  bool definesMacro = false;  // For: the body defines a macro, which holds the iteration's scope
  ExprPtr expr, filter;
  Body body, orElse;
  std::vector<std::pair<std::string, ExprPtr>> parameters;  // Macro (default may be null)
};

struct ParsedBody {
  std::string source;
  std::string sourceName;
  Body body;
};

}  // namespace dfi::jinja::detail
