// Expression evaluation: names through the scope chain, then the context, then the globals;
// attribute and item access, calls, filters and tests; Python's operators, chained
// comparisons, short-circuit and/or that return an operand, and slices.

#include "builtins.h"
#include "failure.h"
#include "interpreter.h"
#include "python_text.h"

namespace dfi::jinja::detail {

Value Interpreter::lookup(const std::string& name, const ScopePtr& scope) const {
  for (const Scope* s = scope.get(); s; s = s->parent.get()) {
    const auto it = s->vars.find(name);
    if (it != s->vars.end()) return it->second;
  }
  if (const Value* v = context_.findAttribute(name)) return *v;
  if (isGlobalName(name)) return lookupGlobal(name);
  return Value::undefined("'" + name + "' is undefined");
}

Value Interpreter::eval(const Expr& e, const ScopePtr& scope) {
  DepthScope depth(*this, e.offset);
  countStep();
  try {
    return evalInner(e, scope);
  } catch (const RuntimeFailure& f) {
    failAt(e.offset, f.what());
  }
}

CallArgs Interpreter::evalArgs(const Expr& e, const ScopePtr& scope, std::size_t firstOperand) {
  CallArgs args;
  args.offset = e.offset;
  for (std::size_t i = firstOperand; i < e.operands.size(); ++i) args.positional.push_back(eval(*e.operands[i], scope));
  for (const auto& [key, value] : e.keywords) args.keyword.emplace_back(key, eval(*value, scope));
  return args;
}

Value Interpreter::evalInner(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::Literal: return e.value;
    case ExprKind::Name: return lookup(e.name, scope);
    case ExprKind::List: case ExprKind::Tuple: {
      ValueList items;
      for (const auto& op : e.operands) items.push_back(eval(*op, scope));
      return Value::list(std::move(items), e.kind == ExprKind::Tuple);
    }
    case ExprKind::Dict: {
      ValuePairs items;
      for (std::size_t i = 0; i + 1 < e.operands.size(); i += 2) {
        Value key = eval(*e.operands[i], scope);
        Value value = eval(*e.operands[i + 1], scope);
        if (key.kind() == Value::Kind::List && !key.isTuple()) fail("TypeError: unhashable type: 'list'");
        if (key.kind() == Value::Kind::Dict) fail("TypeError: unhashable type: 'dict'");
        bool replaced = false;
        for (auto& [k, v] : items)
          if (valuesEqual(k, key)) v = value, replaced = true;
        if (!replaced) items.emplace_back(std::move(key), std::move(value));
      }
      return Value::dict(std::move(items));
    }
    case ExprKind::GetAttr: {
      const Value object = eval(*e.operands[0], scope);
      if (object.isUndefined()) failUndefined(object);
      return getAttribute(object, e.name);
    }
    case ExprKind::GetItem: {
      const Value object = eval(*e.operands[0], scope);
      const Value key = eval(*e.operands[1], scope);
      if (object.isUndefined()) failUndefined(object);
      return getItem(object, key);
    }
    case ExprKind::Slice: return evalSlice(e, scope);
    case ExprKind::Call: {
      const Value callee = eval(*e.operands[0], scope);
      CallArgs args = evalArgs(e, scope, 1);
      if (callee.isUndefined()) failUndefined(callee);
      if (callee.kind() != Value::Kind::Callable) fail("TypeError: '" + callee.typeName() + "' object is not callable");
      currentOffset_ = e.offset;
      return callee.asCallable().call(*this, args);
    }
    case ExprKind::Filter: {
      if (e.deferredUnknown) fail("No filter named '" + e.name + "'.");
      const Value subject = eval(*e.operands[0], scope);
      CallArgs args = evalArgs(e, scope, 1);
      currentOffset_ = e.offset;
      return applyFilter(*this, e.name, subject, args);
    }
    case ExprKind::Test: {
      if (e.deferredUnknown) fail("No test named '" + e.name + "'.");
      const Value subject = eval(*e.operands[0], scope);
      CallArgs args = evalArgs(e, scope, 1);
      currentOffset_ = e.offset;
      return Value::boolean(applyTest(*this, e.name, subject, args));
    }
    case ExprKind::Not: return Value::boolean(!eval(*e.operands[0], scope).truthy());
    case ExprKind::Negate: case ExprKind::Plus: {
      const Value v = eval(*e.operands[0], scope);
      if (v.isUndefined()) failUndefined(v);
      if (!v.isNumber())
        fail(std::string("TypeError: bad operand type for unary ") + (e.kind == ExprKind::Negate ? "-" : "+") + ": '" + v.typeName() + "'");
      if (e.kind == ExprKind::Plus) return v.kind() == Value::Kind::Bool ? Value::integer(v.asInt()) : v;
      if (v.kind() == Value::Kind::Float) return Value::floating(-v.asDouble());
      if (v.asInt() == INT64_MIN) fail("integer overflow");
      return Value::integer(-v.asInt());
    }
    case ExprKind::Binary: {
      const Value a = eval(*e.operands[0], scope);
      const Value b = eval(*e.operands[1], scope);
      return binaryOp(e.name, a, b);
    }
    case ExprKind::Compare: return evalCompare(e, scope);
    case ExprKind::And: {
      Value a = eval(*e.operands[0], scope);
      return a.truthy() ? eval(*e.operands[1], scope) : a;
    }
    case ExprKind::Or: {
      Value a = eval(*e.operands[0], scope);
      return a.truthy() ? a : eval(*e.operands[1], scope);
    }
    case ExprKind::Conditional: {
      if (eval(*e.operands[0], scope).truthy()) return eval(*e.operands[1], scope);
      if (e.operands[2]) return eval(*e.operands[2], scope);
      return Value::undefined("the inline if-expression evaluated to false and no else section was defined.");
    }
  }
  fail("unknown expression");
}

Value Interpreter::evalCompare(const Expr& e, const ScopePtr& scope) {
  Value left = eval(*e.operands[0], scope);
  for (std::size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.operands[i + 1], scope);
    const std::string& op = e.ops[i];
    bool result;
    if (op == "==") result = valuesEqual(left, right);
    else if (op == "!=") result = !valuesEqual(left, right);
    else if (op == "<") result = lessThan(left, right);
    else if (op == ">") result = lessThan(right, left);
    else if (op == "<=") result = lessThan(left, right) || valuesEqual(left, right);
    else if (op == ">=") result = lessThan(right, left) || valuesEqual(left, right);
    else if (op == "in") result = contains(right, left);
    else result = !contains(right, left);
    if (!result) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

namespace {

// Python's slice.indices(): clamps start and stop for a sequence of length n.
void sliceIndices(std::int64_t n, const Value& startV, const Value& stopV, const Value& stepV, std::int64_t& start,
                  std::int64_t& stop, std::int64_t& step) {
  auto asIndex = [](const Value& v) -> std::int64_t {
    if (v.kind() != Value::Kind::Int && v.kind() != Value::Kind::Bool)
      fail("TypeError: slice indices must be integers or None");
    return v.asInt();
  };
  step = stepV.isNone() ? 1 : asIndex(stepV);
  if (step == 0) fail("ValueError: slice step cannot be zero");
  const std::int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? n - 1 : n;
  auto clamp = [&](const Value& v, std::int64_t fallback) {
    if (v.isNone()) return fallback;
    std::int64_t i = asIndex(v);
    if (i < 0) i = std::max(i + n, lower);
    else i = std::min(i, upper);
    return i;
  };
  start = clamp(startV, step < 0 ? upper : lower);
  stop = clamp(stopV, step < 0 ? lower : upper);
}

}  // namespace

Value Interpreter::evalSlice(const Expr& e, const ScopePtr& scope) {
  if (!e.operands[0]) fail("a slice inside a tuple subscript is not supported by this engine");
  const Value object = eval(*e.operands[0], scope);
  auto part = [&](std::size_t i) { return e.operands[i] ? eval(*e.operands[i], scope) : Value::none(); };
  const Value startV = part(1), stopV = part(2), stepV = part(3);
  // jinja2 compiles a slice to a plain Python subscript: no fallback to undefined, errors raise.
  if (object.isUndefined()) failUndefined(object);
  const bool isString = object.isString();
  if (object.kind() == Value::Kind::Dict) fail("TypeError: unhashable type: 'slice'");
  if (!isString && object.kind() != Value::Kind::List) fail("TypeError: '" + object.typeName() + "' object is not subscriptable");
  const std::u32string chars = isString ? toCodePoints(object.asString()) : std::u32string();
  const auto n = static_cast<std::int64_t>(isString ? chars.size() : object.asList().size());
  std::int64_t start = 0, stop = 0, step = 1;
  sliceIndices(n, startV, stopV, stepV, start, stop, step);
  std::u32string text;
  ValueList items;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (isString) text += chars[static_cast<std::size_t>(i)];
    else items.push_back(object.asList()[static_cast<std::size_t>(i)]);
  }
  if (isString) return Value::string(toUtf8(text));
  return Value::list(std::move(items), object.isTuple());
}

}  // namespace dfi::jinja::detail
