// Python's arithmetic and comparisons as jinja2 applies them to template values. Integers are
// 64-bit here; where Python would grow a big integer, this fails instead.

#include <cmath>

#include "failure.h"
#include "interpreter.h"
#include "percent_format.h"
#include "python_text.h"

namespace dfi::jinja::detail {
namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  fail("TypeError: unsupported operand type(s) for " + op + ": '" + a.typeName() + "' and '" + b.typeName() + "'");
}

// 64-bit arithmetic; where Python would grow a big integer, fail instead.
template <typename Op>
std::int64_t checked(Op op, std::int64_t a, std::int64_t b) {
  std::int64_t result = 0;
  if (op(a, b, &result)) fail("integer overflow (jinja2 would compute a big integer)");
  return result;
}
constexpr auto kAdd = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_add_overflow(a, b, r); };
constexpr auto kSub = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_sub_overflow(a, b, r); };
constexpr auto kMul = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_mul_overflow(a, b, r); };

Value repeat(const Value& seq, std::int64_t times) {
  if (times <= 0) return seq.isString() ? Value::string("") : Value::list({}, seq.isTuple());
  if (seq.isString()) {
    if (seq.asString().size() * static_cast<std::uint64_t>(times) > kMaxStringBytes) fail("string repetition too large");
    std::string out;
    for (std::int64_t i = 0; i < times; ++i) out += seq.asString();
    return Value::string(std::move(out));
  }
  if (seq.asList().size() * static_cast<std::uint64_t>(times) > kMaxStringBytes / 8) fail("list repetition too large");
  ValueList out;
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.asList().begin(), seq.asList().end());
  return Value::list(std::move(out), seq.isTuple());
}

double pythonFloatMod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

Value power(const Value& a, const Value& b) {
  if (a.kind() != Value::Kind::Float && b.kind() != Value::Kind::Float && b.asInt() >= 0) {
    std::int64_t result = 1, base = a.asInt(), exp = b.asInt();
    while (exp > 0) {
      if (exp & 1) result = checked(kMul, result, base);
      exp >>= 1;
      if (exp) base = checked(kMul, base, base);
    }
    return Value::integer(result);
  }
  if (a.asDouble() == 0 && b.asDouble() < 0) fail("ZeroDivisionError: 0.0 cannot be raised to a negative power");
  return Value::floating(std::pow(a.asDouble(), b.asDouble()));
}

}  // namespace

Value binaryOp(const std::string& op, const Value& a, const Value& b) {
  using K = Value::Kind;
  if (op == "~") return Value::string(toStr(a) + toStr(b));
  if (a.isUndefined()) failUndefined(a);
  if (b.isUndefined()) failUndefined(b);
  const bool numbers = a.isNumber() && b.isNumber();
  const bool anyFloat = a.kind() == K::Float || b.kind() == K::Float;
  if (op == "+") {
    if (numbers) {
      if (anyFloat) return Value::floating(a.asDouble() + b.asDouble());
      return Value::integer(checked(kAdd, a.asInt(), b.asInt()));
    }
    if (a.isString() && b.isString()) return Value::string(a.asString() + b.asString());
    if (a.kind() == K::List && b.kind() == K::List && a.isTuple() == b.isTuple()) {
      ValueList items = a.asList();
      items.insert(items.end(), b.asList().begin(), b.asList().end());
      return Value::list(std::move(items), a.isTuple());
    }
    if (a.isString()) fail("TypeError: can only concatenate str (not \"" + b.typeName() + "\") to str");
    unsupported("+", a, b);
  }
  if (op == "-") {
    if (!numbers) unsupported("-", a, b);
    if (anyFloat) return Value::floating(a.asDouble() - b.asDouble());
    return Value::integer(checked(kSub, a.asInt(), b.asInt()));
  }
  if (op == "*") {
    if (numbers) {
      if (anyFloat) return Value::floating(a.asDouble() * b.asDouble());
      return Value::integer(checked(kMul, a.asInt(), b.asInt()));
    }
    const bool aSeq = a.isString() || a.kind() == K::List, bSeq = b.isString() || b.kind() == K::List;
    const bool aInt = a.kind() == K::Int || a.kind() == K::Bool, bInt = b.kind() == K::Int || b.kind() == K::Bool;
    if (aSeq && bInt) return repeat(a, b.asInt());
    if (bSeq && aInt) return repeat(b, a.asInt());
    fail("TypeError: can't multiply sequence by non-int of type '" + (aSeq ? b : a).typeName() + "'");
  }
  if (op == "/" || op == "//" || op == "%") {
    if (op == "%" && a.isString()) return Value::string(percentFormat(a.asString(), b));
    if (!numbers) unsupported(op, a, b);
    if (b.asDouble() == 0) fail(op == "/" ? "ZeroDivisionError: division by zero" : "ZeroDivisionError: integer division or modulo by zero");
    if (op == "/") return Value::floating(a.asDouble() / b.asDouble());
    if (anyFloat) {
      const double m = pythonFloatMod(a.asDouble(), b.asDouble());
      return Value::floating(op == "%" ? m : std::round((a.asDouble() - m) / b.asDouble()));
    }
    const std::int64_t x = a.asInt(), y = b.asInt();
    if (x == INT64_MIN && y == -1) fail("integer overflow");
    std::int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) --q, r += y;
    return Value::integer(op == "%" ? r : q);
  }
  if (op == "**") {
    if (!numbers) unsupported("** or pow()", a, b);
    return power(a, b);
  }
  fail("unknown operator " + op);
}

bool lessThan(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.isUndefined()) failUndefined(a);
  if (b.isUndefined()) failUndefined(b);
  if (a.isNumber() && b.isNumber()) {
    if (a.kind() == K::Float || b.kind() == K::Float) return a.asDouble() < b.asDouble();
    return a.asInt() < b.asInt();
  }
  if (a.isString() && b.isString()) return a.asString() < b.asString();  // UTF-8 order is code point order
  if (a.kind() == K::List && b.kind() == K::List && a.isTuple() == b.isTuple()) {
    const auto &x = a.asList(), &y = b.asList();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!valuesEqual(x[i], y[i])) return lessThan(x[i], y[i]);
    return x.size() < y.size();
  }
  fail("TypeError: '<' not supported between instances of '" + a.typeName() + "' and '" + b.typeName() + "'");
}

bool contains(const Value& container, const Value& item) {
  using K = Value::Kind;
  switch (container.kind()) {
    case K::Undefined: return false;  // iterating an Undefined yields nothing
    case K::String:
      if (!item.isString()) fail("TypeError: 'in <string>' requires string as left operand, not " + item.typeName());
      return container.asString().find(item.asString()) != std::string::npos;
    case K::List:
      for (const Value& v : container.asList())
        if (valuesEqual(v, item)) return true;
      return false;
    case K::Dict:
      if ((item.kind() == K::List && !item.isTuple()) || item.kind() == K::Dict)
        fail("TypeError: unhashable type: '" + item.typeName() + "'");
      return container.find(item) != nullptr;
    case K::Iterator: {
      // `in` consumes the iterator up to and including the match, as Python does.
      for (const Value& v : takeFromIterator(container, false))
        if (valuesEqual(v, item)) return true;
      return false;
    }
    default: fail("TypeError: argument of type '" + container.typeName() + "' is not iterable");
  }
}

ValueList takeFromIterator(const Value& v, bool onlyOne) {
  IteratorState& state = v.iteratorState();
  if (!state.deferredError.empty()) fail(state.deferredError);
  const std::size_t end = onlyOne ? std::min(state.position + 1, state.items.size()) : state.items.size();
  ValueList taken(state.items.begin() + static_cast<std::ptrdiff_t>(state.position), state.items.begin() + static_cast<std::ptrdiff_t>(end));
  state.position = end;
  return taken;
}

ValueList iterate(const Value& v) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::Iterator: return takeFromIterator(v, false);
    case K::Undefined: return {};
    case K::List: return v.asList();
    case K::Dict: {
      ValueList keys;
      for (const auto& [k, item] : v.asDict()) keys.push_back(k);
      return keys;
    }
    case K::String: {
      ValueList chars;
      for (const char32_t c : toCodePoints(v.asString())) chars.push_back(Value::string(toUtf8(std::u32string(1, c))));
      return chars;
    }
    default: fail("TypeError: '" + v.typeName() + "' object is not iterable");
  }
}

}  // namespace dfi::jinja::detail
