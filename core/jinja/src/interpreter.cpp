#include "interpreter.h"

#include <algorithm>

#include "builtins.h"
#include "failure.h"
#include "lexer.h"
#include "python_text.h"

namespace dfi::jinja::detail {

Interpreter::Interpreter(const ParsedBody& tpl, Value context, const RenderOptions& options)
    : tpl_(tpl), context_(std::move(context)), options_(options) {}

Interpreter::~Interpreter() {
  for (const Value& ns : assignedNamespaces_) ns.namespaceAttributes().clear();
}

std::string Interpreter::render() {
  auto root = std::make_shared<Scope>();
  std::string out;
  execBody(tpl_.body, root, out);
  return out;
}

void Interpreter::failAt(std::size_t offset, const std::string& message) const {
  int line = 0, column = 0;
  throw RenderError(message, {tpl_.sourceName, describeLocation(tpl_.source, offset, line, column), std::nullopt});
}

void Interpreter::raiseFromTemplate(const std::string& message) const {
  int line = 0, column = 0;
  throw TemplateRaised(message, {tpl_.sourceName, describeLocation(tpl_.source, currentOffset_, line, column), std::nullopt});
}

void Interpreter::countStep() {
  if (++steps_ > kMaxSteps) failAt(currentOffset_, "template exceeded " + std::to_string(kMaxSteps) + " evaluation steps");
}

void Interpreter::append(std::string& out, std::string_view text) {
  if (out.size() + text.size() > kMaxStringBytes)
    failAt(currentOffset_, "template output exceeded " + std::to_string(kMaxStringBytes) + " bytes");
  out += text;
}

Interpreter::Flow Interpreter::execBody(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& s : body) {
    const Flow flow = execStmt(*s, scope, out);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::execStmt(const Stmt& s, const ScopePtr& scope, std::string& out) {
  DepthScope depth(*this, s.offset);
  currentOffset_ = s.offset;
  countStep();
  switch (s.kind) {
    case StmtKind::Text: append(out, s.text); return Flow::Normal;
    case StmtKind::Print: {
      const Value v = eval(*s.expr, scope);
      currentOffset_ = s.offset;
      try {  // printing fails on a value nested past the bound (a namespace holding itself)
        append(out, toStr(v));
      } catch (const RuntimeFailure& f) {
        failAt(s.offset, f.what());
      }
      return Flow::Normal;
    }
    case StmtKind::If: {
      const bool test = eval(*s.expr, scope).truthy();
      return execBody(test ? s.body : s.orElse, scope, out);
    }
    case StmtKind::For: return execFor(s, scope, out);
    case StmtKind::Set: execSet(s, scope, eval(*s.expr, scope)); return Flow::Normal;
    case StmtKind::SetBlock: {
      std::string captured;
      execBody(s.body, scope, captured);
      Value value = Value::string(std::move(captured));
      if (s.filter) {
        // The filter chain was parsed on a null operand: apply it, innermost first, to the text.
        std::vector<const Expr*> chain;
        for (const Expr* f = s.filter.get(); f; f = f->operands[0].get()) chain.push_back(f);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
          CallArgs args = evalArgs(**it, scope, 1);
          currentOffset_ = (*it)->offset;
          try {
            value = applyFilter(*this, (*it)->name, value, args);
          } catch (const RuntimeFailure& f) {
            failAt((*it)->offset, f.what());
          }
        }
      }
      execSet(s, scope, std::move(value));
      return Flow::Normal;
    }
    case StmtKind::Macro: scope->vars[s.text] = makeMacro(s, scope); return Flow::Normal;
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    case StmtKind::Generation: execBody(s.body, scope, out); return Flow::Normal;
  }
  return Flow::Normal;
}

namespace {

void bindTargets(const Stmt& s, Scope& scope, const Value& value) {
  if (!s.unpack) {
    scope.vars[s.targets[0]] = value;
    return;
  }
  const ValueList items = iterate(value);
  if (items.size() > s.targets.size())
    fail("too many values to unpack (expected " + std::to_string(s.targets.size()) + ")");
  if (items.size() < s.targets.size())
    fail("not enough values to unpack (expected " + std::to_string(s.targets.size()) + ", got " + std::to_string(items.size()) + ")");
  for (std::size_t i = 0; i < items.size(); ++i) scope.vars[s.targets[i]] = items[i];
}

Value loopObject(std::size_t index, const ValueList& items) {
  const auto n = static_cast<std::int64_t>(items.size());
  const auto i = static_cast<std::int64_t>(index);
  ValuePairs attrs;
  auto add = [&](const char* name, Value v) { attrs.emplace_back(Value::string(name), std::move(v)); };
  add("index", Value::integer(i + 1));
  add("index0", Value::integer(i));
  add("revindex", Value::integer(n - i));
  add("revindex0", Value::integer(n - i - 1));
  add("first", Value::boolean(i == 0));
  add("last", Value::boolean(i == n - 1));
  add("length", Value::integer(n));
  add("depth", Value::integer(1));
  add("depth0", Value::integer(0));
  add("previtem", index > 0 ? items[index - 1] : Value::undefined("there is no previous item"));
  add("nextitem", index + 1 < items.size() ? items[index + 1] : Value::undefined("there is no next item"));
  add("cycle", Value::callable("loop.cycle", [index](Interpreter&, CallArgs& args) {
        if (args.positional.empty()) fail("no items for cycling given");
        return args.positional[index % args.positional.size()];
      }));
  return Value::dict(std::move(attrs));
}

}  // namespace

Interpreter::Flow Interpreter::execFor(const Stmt& s, const ScopePtr& scope, std::string& out) {
  ValueList items;
  try {
    items = iterate(eval(*s.expr, scope));
  } catch (const RuntimeFailure& f) {
    failAt(s.expr->offset, f.what());
  }
  if (s.filter) {
    ValueList kept;
    for (const Value& item : items) {
      auto probe = std::make_shared<Scope>();
      probe->parent = scope;
      try {
        bindTargets(s, *probe, item);
      } catch (const RuntimeFailure& f) {
        failAt(s.offset, f.what());
      }
      if (eval(*s.filter, probe).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  ScopePtr iteration;
  for (std::size_t i = 0; i < items.size(); ++i) {
    countStep();
    // Each iteration starts from an empty scope; reuse the last one's storage unless something
    // still holds it (a macro defined in the body keeps a reference to its scope).
    if (iteration && iteration.use_count() == 1 && !s.definesMacro) {
      iteration->vars.clear();
    } else {
      iteration = std::make_shared<Scope>();
      iteration->parent = scope;
    }
    try {
      bindTargets(s, *iteration, items[i]);
    } catch (const RuntimeFailure& f) {
      failAt(s.offset, f.what());
    }
    if (s.readsLoop) iteration->vars["loop"] = loopObject(i, items);
    if (execBody(s.body, iteration, out) == Flow::Break) break;
  }
  if (items.empty()) return execBody(s.orElse, scope, out);
  return Flow::Normal;
}

void Interpreter::execSet(const Stmt& s, const ScopePtr& scope, Value value) {
  currentOffset_ = s.offset;
  if (s.attribute.empty()) {
    try {
      bindTargets(s, *scope, value);
    } catch (const RuntimeFailure& f) {
      failAt(s.offset, f.what());
    }
    return;
  }
  const Value target = lookup(s.text, scope);
  if (target.kind() != Value::Kind::Namespace) failAt(s.offset, "cannot assign attribute on non-namespace object");
  if (!s.attribute.empty() && s.attribute[0] == '_')
    failAt(s.offset, "SecurityError: Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" +
                         s.attribute + "'. Please rename the attribute.");
  if (std::ranges::none_of(assignedNamespaces_, [&](const Value& ns) { return ns.identity() == target.identity(); }))
    assignedNamespaces_.push_back(target);
  auto& attrs = target.namespaceAttributes();
  for (auto& [k, v] : attrs) {
    if (k.isString() && k.asString() == s.attribute) {
      v = std::move(value);
      return;
    }
  }
  attrs.emplace_back(Value::string(s.attribute), std::move(value));
}

Value Interpreter::makeMacro(const Stmt& s, const ScopePtr& scope) {
  const Stmt* macro = &s;
  // The defining scope is held weakly: the macro lives in it, and a strong reference would
  // make a cycle. Scopes outlive every call made while rendering.
  std::weak_ptr<Scope> home = scope;
  return Value::callable(s.text, [this, macro, home](Interpreter&, CallArgs& args) {
    const std::size_t callOffset = args.offset;
    if (++macroDepth_ > kMaxNesting) {
      --macroDepth_;
      failAt(callOffset, "macro calls nested more than " + std::to_string(kMaxNesting) + " deep");
    }
    struct Exit {
      int& d;
      ~Exit() { --d; }
    } exitGuard{macroDepth_};
    auto frame = std::make_shared<Scope>();
    frame->parent = home.lock();
    const auto& params = macro->parameters;
    if (args.positional.size() > params.size())
      failAt(callOffset, "macro '" + macro->text + "' takes not more than " + std::to_string(params.size()) + " argument(s)");
    for (std::size_t i = 0; i < args.positional.size(); ++i) frame->vars[params[i].first] = args.positional[i];
    for (auto& [key, value] : args.keyword) {
      bool known = false;
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].first != key) continue;
        if (i < args.positional.size()) failAt(callOffset, "macro '" + macro->text + "' got multiple values for argument '" + key + "'");
        known = true;
      }
      if (!known) failAt(callOffset, "macro '" + macro->text + "' takes no keyword argument '" + key + "'");
      frame->vars[key] = value;
    }
    for (const auto& [name, def] : params) {
      if (frame->vars.count(name)) continue;
      frame->vars[name] = def ? eval(*def, frame) : Value::undefined("parameter '" + name + "' was not provided");
    }
    std::string out;
    execBody(macro->body, frame, out);
    return Value::string(std::move(out));
  });
}

}  // namespace dfi::jinja::detail
