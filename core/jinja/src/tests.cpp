// jinja2's built-in tests ({% if x is mapping %}), with Python's notions of type: bool is a
// number, a dict is a sequence, and jinja2's Undefined is iterable, a sequence and callable.

#include <algorithm>
#include <array>
#include <string_view>

#include "builtins.h"
#include "failure.h"
#include "interpreter.h"
#include "methods.h"
#include "python_text.h"

namespace dfi::jinja::detail {
namespace {

constexpr std::array<std::string_view, 39> kTests = {
    "odd", "even", "divisibleby", "defined", "undefined", "filter", "test", "none", "boolean", "false", "true",
    "integer", "float", "lower", "upper", "string", "mapping", "number", "sequence", "iterable", "callable",
    "sameas", "escaped", "in", "==", "eq", "equalto", "!=", "ne", ">", "gt", "greaterthan", ">=", "ge", "<", "lt",
    "lessthan", "<=", "le"};

const Value& onlyArgument(const CallArgs& args, const std::string& test) {
  if (args.positional.empty()) fail("TypeError: test '" + test + "' takes one argument");
  return args.positional[0];
}

}  // namespace

Availability testAvailability(std::string_view name) {
  return std::find(kTests.begin(), kTests.end(), name) != kTests.end() ? Availability::Implemented : Availability::Unknown;
}

bool applyTest(Interpreter&, const std::string& name, const Value& v, CallArgs& args) {
  using K = Value::Kind;
  if (name == "defined") return !v.isUndefined();
  if (name == "undefined") return v.isUndefined();
  if (name == "none") return v.isNone();
  if (name == "boolean") return v.kind() == K::Bool;
  if (name == "true") return v.kind() == K::Bool && v.asBool();
  if (name == "false") return v.kind() == K::Bool && !v.asBool();
  if (name == "integer") return v.kind() == K::Int;
  if (name == "float") return v.kind() == K::Float;
  if (name == "number") return v.isNumber();
  if (name == "string") return v.isString();
  if (name == "mapping") return v.kind() == K::Dict;
  if (name == "sequence" || name == "iterable")
    return v.isUndefined() || v.isString() || v.kind() == K::List || v.kind() == K::Dict ||
           (name == "iterable" && v.kind() == K::Iterator);
  if (name == "callable") return v.kind() == K::Callable || v.isUndefined();
  if (name == "escaped") return false;
  if (name == "lower" || name == "upper") {  // str(value).islower() / isupper()
    const std::string text = toStr(v);
    const std::string lower = pythonLower(text), upper = pythonUpper(text);
    return name == "lower" ? lower == text && upper != text : upper == text && lower != text;
  }
  // value % 2 == 1 and friends, with Python's % (floats allowed).
  if (name == "odd") return valuesEqual(binaryOp("%", v, Value::integer(2)), Value::integer(1));
  if (name == "even") return valuesEqual(binaryOp("%", v, Value::integer(2)), Value::integer(0));
  if (name == "divisibleby") return valuesEqual(binaryOp("%", v, onlyArgument(args, name)), Value::integer(0));
  if (name == "filter") return filterAvailability(toStr(v)) == Availability::Implemented;
  if (name == "test") return testAvailability(toStr(v)) == Availability::Implemented;
  if (name == "sameas") {
    const Value& other = onlyArgument(args, name);
    if (v.identity() || other.identity()) return v.identity() == other.identity();
    return v.kind() == other.kind() && (v.kind() != K::Bool || v.asBool() == other.asBool()) &&
           (v.kind() != K::Int || v.asInt() == other.asInt());
  }
  if (name == "in") return contains(onlyArgument(args, name), v);
  const Value& other = onlyArgument(args, name);
  if (name == "==" || name == "eq" || name == "equalto") return valuesEqual(v, other);
  if (name == "!=" || name == "ne") return !valuesEqual(v, other);
  if (name == ">" || name == "gt" || name == "greaterthan") return lessThan(other, v);
  if (name == ">=" || name == "ge") return !lessThan(v, other);
  if (name == "<" || name == "lt" || name == "lessthan") return lessThan(v, other);
  if (name == "<=" || name == "le") return !lessThan(other, v);
  fail("No test named '" + name + "'.");
}

}  // namespace dfi::jinja::detail
