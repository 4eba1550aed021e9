// The names a template reads from its caller: every name loaded before the template assigns
// it in an enclosing scope, in the order jinja2's own analysis
// (jinja2.meta.find_undeclared_variables) meets them, less the environment's globals.

#include <algorithm>
#include <set>

#include "ast.h"
#include "builtins.h"
#include "variables.h"

namespace dfi::jinja::detail {
namespace {

class VariableWalker {
 public:
  std::vector<std::string> found;

  void body(const Body& statements) {
    for (const auto& s : statements) statement(*s);
  }

 private:
  void statement(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::If:
        expr(s.expr.get());
        body(s.body);
        body(s.orElse);
        break;
      case StmtKind::For:
        expr(s.expr.get());
        scopes_.emplace_back(s.targets.begin(), s.targets.end());
        scopes_.back().insert("loop");
        expr(s.filter.get());
        body(s.body);
        scopes_.pop_back();
        body(s.orElse);
        break;
      case StmtKind::Set:
        expr(s.expr.get());
        if (!s.attribute.empty()) load(s.text);
        assign(s.targets);
        break;
      case StmtKind::SetBlock:
        body(s.body);
        expr(s.filter.get());
        assign(s.targets);
        break;
      case StmtKind::Macro:
        assign({s.text});
        scopes_.emplace_back();
        for (const auto& [param, def] : s.parameters) {
          expr(def.get());
          scopes_.back().insert(param);
        }
        scopes_.back().insert({"varargs", "kwargs", "caller"});
        body(s.body);
        scopes_.pop_back();
        break;
      case StmtKind::Generation: body(s.body); break;
      default: expr(s.expr.get()); break;
    }
  }

  void expr(const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::Name) load(e->name);
    for (const auto& op : e->operands) expr(op.get());
    for (const auto& kw : e->keywords) expr(kw.second.get());
  }

  void assign(const std::vector<std::string>& names) {
    for (const auto& n : names) scopes_.back().insert(n);
  }

  void load(const std::string& name) {
    for (const auto& scope : scopes_)
      if (scope.count(name)) return;
    if (isGlobalName(name)) return;
    if (std::find(found.begin(), found.end(), name) == found.end()) found.push_back(name);
  }

  std::vector<std::set<std::string>> scopes_{1};
};

}  // namespace

std::vector<std::string> readVariables(const Body& body) {
  VariableWalker walker;
  walker.body(body);
  return walker.found;
}

}  // namespace dfi::jinja::detail
