// The globals of transformers' chat template environment: jinja2's range (bounded by the
// sandbox), namespace and dict as transformers restricts them, raise_exception and
// strftime_now.

#include <ctime>

#include "builtins.h"
#include "failure.h"
#include "interpreter.h"
#include "methods.h"

namespace dfi::jinja::detail {
namespace {

std::int64_t rangeArgument(const Value& v) {
  if (v.kind() != Value::Kind::Int && v.kind() != Value::Kind::Bool)
    fail("TypeError: '" + v.typeName() + "' object cannot be interpreted as an integer");
  return v.asInt();
}

Value range(Interpreter&, CallArgs& args) {
  if (!args.keyword.empty()) fail("TypeError: range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) fail("TypeError: range expected 1 to 3 arguments, got " + std::to_string(p.size()));
  const std::int64_t start = p.size() == 1 ? 0 : rangeArgument(p[0]);
  const std::int64_t stop = rangeArgument(p.size() == 1 ? p[0] : p[1]);
  const std::int64_t step = p.size() == 3 ? rangeArgument(p[2]) : 1;
  if (step == 0) fail("ValueError: range() arg 3 must not be zero");
  const long double length = step > 0 ? (stop > start ? (static_cast<long double>(stop) - start + step - 1) / step : 0)
                                      : (start > stop ? (static_cast<long double>(start) - stop - step - 1) / -step : 0);
  if (length > kMaxRange)
    fail("OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (" + std::to_string(kMaxRange) + ").");
  ValueList items;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.push_back(Value::integer(i));
  return Value::list(std::move(items));
}

// namespace(...) and dict(...): keyword arguments, after an optional mapping.
ValuePairs keywordPairs(CallArgs& args, const char* what) {
  ValuePairs pairs;
  if (args.positional.size() > 1) fail(std::string("TypeError: ") + what + " expected at most 1 positional argument");
  if (!args.positional.empty()) {
    const Value& init = args.positional[0];
    if (init.kind() != Value::Kind::Dict) fail(std::string("TypeError: ") + what + " argument must be a mapping");
    pairs = init.asDict();
  }
  for (auto& [k, v] : args.keyword) {
    bool replaced = false;
    for (auto& [pk, pv] : pairs)
      if (pk.isString() && pk.asString() == k) pv = v, replaced = true;
    if (!replaced) pairs.emplace_back(Value::string(k), v);
  }
  return pairs;
}

Value makeNamespace(Interpreter&, CallArgs& args) {
  ValuePairs attrs = keywordPairs(args, "namespace()");
  for (const auto& [k, v] : attrs)
    if (k.isString() && !k.asString().empty() && k.asString()[0] == '_')
      fail("SecurityError: Chat templates cannot store underscore-prefixed attributes on a namespace, but got '" +
           k.asString() + "'. Please rename the attribute.");
  return Value::namespaceObject(std::move(attrs));
}

Value makeDict(Interpreter&, CallArgs& args) { return Value::dict(keywordPairs(args, "dict()")); }

Value raiseException(Interpreter& interp, CallArgs& args) {
  interp.raiseFromTemplate(args.positional.empty() ? std::string() : toStr(args.positional[0]));
}

Value strftimeNow(Interpreter& interp, CallArgs& args) {
  if (args.positional.size() != 1 || !args.positional[0].isString()) fail("TypeError: strftime_now() takes one format string");
  const auto now = interp.options().now.value_or(std::chrono::system_clock::now());
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[512];
  const std::size_t n = std::strftime(buf, sizeof buf, args.positional[0].asString().c_str(), &local);
  if (n == 0 && !args.positional[0].asString().empty()) fail("strftime_now() format produced no output or is too long");
  return Value::string(std::string(buf, n));
}

}  // namespace

bool isGlobalName(std::string_view name) {
  return name == "range" || name == "namespace" || name == "dict" || name == "raise_exception" ||
         name == "strftime_now" || name == "cycler" || name == "joiner" || name == "lipsum";
}

Value lookupGlobal(std::string_view name) {
  if (name == "range") return Value::callable("range", range);
  if (name == "namespace") return Value::callable("namespace", makeNamespace);
  if (name == "dict") return Value::callable("dict", makeDict);
  if (name == "raise_exception") return Value::callable("raise_exception", raiseException);
  if (name == "strftime_now") return Value::callable("strftime_now", strftimeNow);
  const std::string n(name);
  return Value::callable(n, [n](Interpreter&, CallArgs&) -> Value { fail("the global '" + n + "' is not supported by this engine"); });
}

}  // namespace dfi::jinja::detail
