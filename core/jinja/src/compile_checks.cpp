#include "compile_checks.h"

#include <algorithm>

#include "builtins.h"

namespace dfi::jinja::detail {

bool mentionsLoop(const Expr* e) {
  if (!e) return false;
  if (e->kind == ExprKind::Name && e->name == "loop") return true;
  for (const auto& op : e->operands)
    if (mentionsLoop(op.get())) return true;
  for (const auto& kw : e->keywords)
    if (mentionsLoop(kw.second.get())) return true;
  return false;
}
bool mentionsLoop(const Body& body) {
  for (const auto& s : body) {
    if (mentionsLoop(s->expr.get()) || mentionsLoop(s->filter.get()) || mentionsLoop(s->body) || mentionsLoop(s->orElse))
      return true;
    for (const auto& p : s->parameters)
      if (mentionsLoop(p.second.get())) return true;
  }
  return false;
}

bool definesMacro(const Body& body) {
  return std::any_of(body.begin(), body.end(), [](const StmtPtr& s) {
    return s->kind == StmtKind::Macro || definesMacro(s->body) || definesMacro(s->orElse);
  });
}

// Unknown filters and tests fail when the template compiles, unless they sit inside an
// if statement or a conditional expression (a "soft" frame), where they fail only if run.
namespace {

void checkExpr(const TokenStream& stream, Expr* e, bool soft) {
  if (!e) return;
  if (e->kind == ExprKind::Conditional) soft = true;
  if (e->kind == ExprKind::Filter || e->kind == ExprKind::Test) {
    const bool filter = e->kind == ExprKind::Filter;
    const auto availability = filter ? filterAvailability(e->name) : testAvailability(e->name);
    if (availability == Availability::NotImplemented)
      stream.failAt(e->offset, std::string(filter ? "filter" : "test") + " '" + e->name + "' is not supported by this engine");
    if (availability == Availability::Unknown) {
      if (!soft) stream.failAt(e->offset, std::string("No ") + (filter ? "filter" : "test") + " named '" + e->name + "'.");
      e->deferredUnknown = true;
    }
  }
  for (auto& op : e->operands) checkExpr(stream, op.get(), soft);
  for (auto& kw : e->keywords) checkExpr(stream, kw.second.get(), soft);
}

void checkFrames(const TokenStream& stream, Body& body, bool soft) {
  for (auto& s : body) {
    switch (s->kind) {
      case StmtKind::If:
        checkExpr(stream, s->expr.get(), true);
        checkFrames(stream, s->body, true);
        checkFrames(stream, s->orElse, true);
        break;
      case StmtKind::For:
        checkExpr(stream, s->expr.get(), soft);
        checkExpr(stream, s->filter.get(), false);
        checkFrames(stream, s->body, false);
        checkFrames(stream, s->orElse, false);
        break;
      case StmtKind::Macro:
        for (auto& p : s->parameters) checkExpr(stream, p.second.get(), false);
        checkFrames(stream, s->body, false);
        break;
      case StmtKind::SetBlock:
        checkExpr(stream, s->filter.get(), soft);
        checkFrames(stream, s->body, soft);
        break;
      case StmtKind::Generation: checkFrames(stream, s->body, false); break;
      default: checkExpr(stream, s->expr.get(), soft); break;
    }
  }
}

}  // namespace

void checkCompileTime(const TokenStream& stream, Body& body) { checkFrames(stream, body, false); }

}  // namespace dfi::jinja::detail
