// Attribute and item access the way jinja2's sandbox does it: obj.name tries a Python
// attribute first (str, dict and list methods) and then the item; obj[key] tries the item
// first and then, for a string key, the attribute. Methods that would mutate a list or dict
// are refused as ImmutableSandboxedEnvironment refuses them.

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "builtins.h"
#include "failure.h"
#include "interpreter.h"
#include "methods.h"
#include "python_text.h"

namespace dfi::jinja::detail {
namespace {

constexpr std::array<std::string_view, 47> kStrMethods = {
    "capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find", "format", "format_map",
    "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric",
    "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip", "maketrans", "partition",
    "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition", "rsplit", "rstrip", "split",
    "splitlines", "startswith", "strip", "swapcase", "title", "translate", "upper", "zfill"};
constexpr std::array<std::string_view, 11> kDictMethods = {"clear", "copy", "fromkeys", "get", "items", "keys",
                                                           "pop", "popitem", "setdefault", "update", "values"};
constexpr std::array<std::string_view, 5> kDictMutators = {"clear", "pop", "popitem", "setdefault", "update"};
constexpr std::array<std::string_view, 11> kListMethods = {"append", "clear", "copy", "count", "extend", "index",
                                                           "insert", "pop", "remove", "reverse", "sort"};
constexpr std::array<std::string_view, 8> kListMutators = {"append", "clear", "extend", "insert", "pop", "remove",
                                                           "reverse", "sort"};

template <std::size_t N>
bool in(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

Value refused(const Value& object, const std::string& name) {
  return Value::unsafe("access to attribute '" + name + "' of '" + object.typeName() + "' object is unsafe.");
}

Value noAttribute(const Value& object, const std::string& name) {
  return Value::undefined("'" + object.typeName() + " object' has no attribute '" + name + "'");
}

// The Python attribute `name` of object, if the type has one (a bound method here).
std::optional<Value> pythonAttribute(const Value& object, const std::string& name) {
  using K = Value::Kind;
  const bool dunder = name.size() > 4 && name.rfind("__", 0) == 0 && name.compare(name.size() - 2, 2, "__") == 0;
  if (dunder) return refused(object, name);  // every object has some; none is safe to reach
  switch (object.kind()) {
    case K::String:
      if (in(kStrMethods, name)) return boundMethod(object, name);
      break;
    case K::Dict:
      if (in(kDictMutators, name)) return refused(object, name);
      if (in(kDictMethods, name)) return boundMethod(object, name);
      break;
    case K::List:
      if (in(kListMutators, name)) return refused(object, name);
      if (in(kListMethods, name)) return boundMethod(object, name);
      break;
    case K::Namespace:
      if (const Value* v = object.findAttribute(name)) return *v;
      break;
    default: break;
  }
  return std::nullopt;
}

// obj[key] in Python, or nullopt where Python raises TypeError or LookupError.
std::optional<Value> pythonItem(const Value& object, const Value& key) {
  using K = Value::Kind;
  if (object.kind() == K::Dict) {
    if (key.kind() == K::List && !key.isTuple()) return std::nullopt;
    if (const Value* v = object.find(key)) return *v;
    return std::nullopt;
  }
  const bool isInt = key.kind() == K::Int || key.kind() == K::Bool;
  if (!isInt) return std::nullopt;
  std::int64_t i = key.asInt();
  if (object.kind() == K::List) {
    const auto n = static_cast<std::int64_t>(object.asList().size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return std::nullopt;
    return object.asList()[static_cast<std::size_t>(i)];
  }
  if (object.isString()) {
    const std::u32string chars = toCodePoints(object.asString());
    const auto n = static_cast<std::int64_t>(chars.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return std::nullopt;
    return Value::string(toUtf8(chars.substr(static_cast<std::size_t>(i), 1)));
  }
  return std::nullopt;
}

}  // namespace

Value getAttribute(const Value& object, const std::string& name) {
  if (auto attr = pythonAttribute(object, name)) return *attr;
  if (object.kind() != Value::Kind::Namespace)
    if (auto item = pythonItem(object, Value::string(name))) return *item;
  return noAttribute(object, name);
}

Value getItem(const Value& object, const Value& key) {
  if (object.kind() != Value::Kind::Namespace)
    if (auto item = pythonItem(object, key)) return *item;
  if (key.isString())
    if (auto attr = pythonAttribute(object, key.asString())) return *attr;
  if (key.isString()) return noAttribute(object, key.asString());
  return Value::undefined(object.typeName() + " object has no element " + toRepr(key));
}

}  // namespace dfi::jinja::detail
