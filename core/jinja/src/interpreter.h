#pragma once
// Walks the syntax tree: jinja2's scoping (a fresh scope per loop iteration and per macro
// call, `if` adds none, macros see their defining scope as it is when called), its
// operators with Python semantics, and the limits that keep a hostile template bounded.

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ast.h"
#include "failure.h"
#include "dfi/jinja/template.h"

namespace dfi::jinja::detail {

struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  Interpreter(const ParsedBody& tpl, Value context, const RenderOptions& options);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  std::string render();

  // Used by filters, tests and globals.
  const RenderOptions& options() const { return options_; }
  [[noreturn]] void raiseFromTemplate(const std::string& message) const;
  std::size_t currentOffset() const { return currentOffset_; }

 private:
  enum class Flow { Normal, Break, Continue };

  Flow execBody(const Body& body, const ScopePtr& scope, std::string& out);
  Flow execStmt(const Stmt& s, const ScopePtr& scope, std::string& out);
  Flow execFor(const Stmt& s, const ScopePtr& scope, std::string& out);
  void execSet(const Stmt& s, const ScopePtr& scope, Value value);
  Value makeMacro(const Stmt& s, const ScopePtr& scope);

  Value eval(const Expr& e, const ScopePtr& scope);
  Value evalInner(const Expr& e, const ScopePtr& scope);
  Value lookup(const std::string& name, const ScopePtr& scope) const;
  CallArgs evalArgs(const Expr& e, const ScopePtr& scope, std::size_t firstOperand);
  Value evalCompare(const Expr& e, const ScopePtr& scope);
  Value evalSlice(const Expr& e, const ScopePtr& scope);

  void append(std::string& out, std::string_view text);
  void countStep();
  [[noreturn]] void failAt(std::size_t offset, const std::string& message) const;
  friend struct DepthScope;

  const ParsedBody& tpl_;
  Value context_;
  RenderOptions options_;
  std::uint64_t steps_ = 0;
  int depth_ = 0;
  int macroDepth_ = 0;
  std::size_t currentOffset_ = 0;
  // Every namespace given an attribute: one may hold itself (`ns.n = ns`), a cycle of shared
  // storage that only clearing its attributes breaks, which the destructor does.
  std::vector<Value> assignedNamespaces_;
};

// Counts nesting (expressions, bodies, macro calls) so a hostile template fails cleanly
// before it can overflow the stack.
struct DepthScope {
  Interpreter& interp;
  DepthScope(Interpreter& i, std::size_t offset) : interp(i) {
    if (++interp.depth_ > 6 * kMaxNesting) interp.failAt(offset, "template evaluation nested too deeply");
  }
  ~DepthScope() { --interp.depth_; }
};

// Python's binary operators and comparisons on values (operators.cpp).
Value binaryOp(const std::string& op, const Value& a, const Value& b);
bool lessThan(const Value& a, const Value& b);  // a < b, or a TypeError
bool contains(const Value& container, const Value& item);  // item in container
// The items `for` walks over: a list's items, a dict's keys, a string's characters, what is
// left of an iterator (which this consumes).
ValueList iterate(const Value& v);
// The next item (onlyOne) or all remaining items of an iterator, consuming them.
ValueList takeFromIterator(const Value& v, bool onlyOne);

}  // namespace dfi::jinja::detail
