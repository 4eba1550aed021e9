// jinja2's built-in filters with transformers' tojson, as the chat templates use them.

#include <algorithm>
#include <iterator>
#include <cmath>
#include <string_view>

#include "builtins.h"
#include "failure.h"
#include "interpreter.h"
#include "json_dump.h"
#include "methods.h"
#include "percent_format.h"
#include "python_text.h"
#include "sequence_filters.h"

namespace dfi::jinja::detail {
namespace {

// Every filter jinja2 3.1 has: those implemented here, and those a template may not use here
// (a syntax error naming the filter, rather than a silently different rendering).
constexpr std::string_view kImplemented[] = {
    "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e", "escape", "first",
    "float", "forceescape", "format", "indent", "int", "items", "join", "last", "length", "list", "lower", "map",
    "max", "min", "reject", "rejectattr", "replace", "reverse", "round", "safe", "select", "selectattr", "sort",
    "string", "sum", "title", "tojson", "trim", "unique", "upper", "wordcount"};
constexpr std::string_view kNotImplemented[] = {"filesizeformat", "groupby", "pprint", "random", "slice", "striptags",
                                                "truncate", "urlencode", "urlize", "wordwrap", "xmlattr"};

const Value kNone = Value::none();

const Value& arg(const CallArgs& args, std::size_t i, const char* kw) {
  const Value* v = argument(args, i, kw);
  return v ? *v : kNone;
}
bool flag(const CallArgs& args, std::size_t i, const char* kw, bool fallback = false) {
  const Value* v = argument(args, i, kw);
  return v ? v->truthy() : fallback;
}

std::string str(const Value& v) { return toStr(v); }

// jinja2's lazy filters return a one-shot iterator; an error computing it surfaces on use.
Value lazily(const std::string& pythonType, const std::function<ValueList()>& compute) {
  try {
    return Value::iterator(pythonType, compute());
  } catch (const RuntimeFailure& f) {
    return Value::iterator(pythonType, {}, f.what());
  }
}

// jinja2's title filter (not str.title): each piece between runs of -, whitespace, ( { [ <
// gets its first character uppercased and the rest lowercased.
std::string jinjaTitle(const std::string& text) {
  auto separator = [](char32_t c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || isPythonSpace(c); };
  const std::u32string cps = toCodePoints(text);
  std::string out;
  std::size_t i = 0;
  while (i < cps.size()) {
    std::size_t j = i;
    const bool sep = separator(cps[i]);
    while (j < cps.size() && separator(cps[j]) == sep) ++j;
    const std::string piece = toUtf8(std::u32string_view(cps).substr(i, j - i));
    const std::string first = toUtf8(std::u32string_view(cps).substr(i, 1));
    out += pythonUpper(first) + pythonLower(piece.substr(first.size()));
    i = j;
  }
  return out;
}

std::string htmlEscape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value toInt(const Value& v, const CallArgs& args) {
  const Value* def = argument(args, 0, "default");
  const Value fallback = def ? *def : Value::integer(0);
  const Value& baseArg = arg(args, 1, "base");
  const int base = baseArg.isNone() ? 10 : static_cast<int>(baseArg.asInt());
  switch (v.kind()) {
    case Value::Kind::Int: case Value::Kind::Bool: return Value::integer(v.asInt());
    case Value::Kind::Float:
      if (!std::isfinite(v.asDouble()) || std::fabs(v.asDouble()) > 9e18) return fallback;
      return Value::integer(static_cast<std::int64_t>(v.asDouble()));
    case Value::Kind::String: {
      std::string s = pythonStrip(v.asString(), StripSide::Both);
      s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
      if (s.empty()) return fallback;
      char* end = nullptr;
      errno = 0;
      const long long i = std::strtoll(s.c_str(), &end, base);
      if (errno == 0 && end && *end == '\0') return Value::integer(i);
      const double d = std::strtod(s.c_str(), &end);
      if (end && *end == '\0' && std::isfinite(d) && std::fabs(d) < 9e18) return Value::integer(static_cast<std::int64_t>(d));
      return fallback;
    }
    default: return fallback;
  }
}

Value toFloat(const Value& v, const CallArgs& args) {
  const Value* def = argument(args, 0, "default");
  const Value fallback = def ? *def : Value::floating(0.0);
  if (v.isNumber()) return Value::floating(v.asDouble());
  if (!v.isString()) return fallback;
  const std::string s = pythonStrip(v.asString(), StripSide::Both);
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0' ? Value::floating(d) : fallback;
}

Value roundFilter(const Value& v, const CallArgs& args) {
  const std::int64_t precision = arg(args, 0, "precision").isNone() ? 0 : arg(args, 0, "precision").asInt();
  const std::string method = arg(args, 1, "method").isNone() ? "common" : str(arg(args, 1, "method"));
  if (!v.isNumber()) fail("TypeError: type " + v.typeName() + " doesn't define __round__ method");
  // Python's round(int, n) keeps an int; ceil and floor go through float division.
  if (method == "common" && v.kind() != Value::Kind::Float) return Value::integer(v.asInt());
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = v.asDouble() * scale;
  double r;
  if (method == "common") r = std::nearbyint(x);  // Python's round(): halves to even
  else if (method == "ceil") r = std::ceil(x);
  else if (method == "floor") r = std::floor(x);
  else fail("FilterArgumentError: method must be common, ceil or floor");
  return Value::floating(r / scale);
}

Value indentFilter(const Value& v, const CallArgs& args) {
  const Value& widthArg = arg(args, 0, "width");
  const std::string indention = widthArg.isString() ? widthArg.asString() : std::string(widthArg.isNone() ? 4 : static_cast<std::size_t>(std::max<std::int64_t>(0, widthArg.asInt())), ' ');
  if (!v.isString()) fail("TypeError: unsupported operand type(s) for +=: '" + v.typeName() + "' and 'str'");
  const bool first = flag(args, 1, "first"), blank = flag(args, 2, "blank");
  const std::vector<std::string> lines = splitLines(v.asString() + "\n");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    if (i && (blank || !lines[i].empty())) out += indention;
    out += lines[i];
  }
  if (first) out = indention + out;
  return Value::string(std::move(out));
}

Value tojsonFilter(const Value& v, const CallArgs& args) {
  JsonDumpOptions o;
  o.ensureAscii = flag(args, 0, "ensure_ascii");
  const Value& indent = arg(args, 1, "indent");
  if (indent.isString()) o.indent = indent.asString();
  else if (indent.isNumber()) o.indent = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, indent.asInt())), ' ');
  const Value& seps = arg(args, 2, "separators");
  if (seps.kind() == Value::Kind::List && seps.asList().size() == 2) {
    o.itemSeparator = stringArgument(seps.asList()[0], "separator");
    o.keySeparator = stringArgument(seps.asList()[1], "separator");
  }
  o.sortKeys = flag(args, 3, "sort_keys");
  return Value::string(jsonDumps(v, o));
}

}  // namespace

Availability filterAvailability(std::string_view name) {
  if (std::find(std::begin(kImplemented), std::end(kImplemented), name) != std::end(kImplemented)) return Availability::Implemented;
  if (std::find(std::begin(kNotImplemented), std::end(kNotImplemented), name) != std::end(kNotImplemented))
    return Availability::NotImplemented;
  return Availability::Unknown;
}

Value applyFilter(Interpreter& interp, const std::string& name, const Value& v, CallArgs& args) {
  using K = Value::Kind;
  if (name == "tojson") return tojsonFilter(v, args);
  if (name == "format") {  // soft_str(value) % (kwargs or args)
    if (!args.positional.empty() && !args.keyword.empty()) fail("FilterArgumentError: can't handle positional and keyword arguments at the same time");
    if (!args.keyword.empty()) {
      ValuePairs named;
      for (auto& [k, item] : args.keyword) named.emplace_back(Value::string(k), item);
      return Value::string(percentFormat(str(v), Value::dict(std::move(named))));
    }
    return Value::string(percentFormat(str(v), Value::list(args.positional, true)));
  }
  if (name == "safe") return v.isString() ? v : Value::string(str(v));
  if (name == "string") return Value::string(str(v));
  if (name == "default" || name == "d") {
    const Value* def = argument(args, 0, "default_value");
    const bool boolean = flag(args, 1, "boolean");
    if (v.isUndefined() || (boolean && !v.truthy())) return def ? *def : Value::string("");
    return v;
  }
  if (name == "length" || name == "count") {
    switch (v.kind()) {
      case K::Undefined: return Value::integer(0);
      case K::Iterator: fail("TypeError: object of type '" + v.typeName() + "' has no len()");
      case K::String: return Value::integer(static_cast<std::int64_t>(codePointCount(v.asString())));
      case K::List: return Value::integer(static_cast<std::int64_t>(v.asList().size()));
      case K::Dict: return Value::integer(static_cast<std::int64_t>(v.asDict().size()));
      default: fail("TypeError: object of type '" + v.typeName() + "' has no len()");
    }
  }
  if (name == "trim") {
    if (arg(args, 0, "chars").isNone()) return Value::string(pythonStrip(str(v), StripSide::Both));
    const std::u32string chars = toCodePoints(stringArgument(arg(args, 0, "chars"), "strip arg"));
    return Value::string(pythonStrip(str(v), StripSide::Both, &chars));
  }
  if (name == "upper") return Value::string(pythonUpper(str(v)));
  if (name == "lower") return Value::string(pythonLower(str(v)));
  if (name == "title") return Value::string(jinjaTitle(str(v)));
  if (name == "capitalize") return Value::string(pythonCapitalize(str(v)));
  if (name == "escape" || name == "e" || name == "forceescape") return Value::string(htmlEscape(str(v)));
  if (name == "replace") {
    CallArgs methodArgs;
    methodArgs.positional = {Value::string(str(arg(args, 0, "old"))), Value::string(str(arg(args, 1, "new")))};
    if (const Value* count = argument(args, 2, "count"); count && !count->isNone()) methodArgs.positional.push_back(*count);
    return getAttribute(Value::string(str(v)), "replace").asCallable().call(interp, methodArgs);
  }
  if (name == "items") {
    return lazily("generator", [&] {
      ValueList out;
      if (v.isUndefined()) return out;
      if (v.kind() != K::Dict) fail("TypeError: Can only get item pairs from a mapping.");
      for (const auto& [k, item] : v.asDict()) out.push_back(Value::list({k, item}, true));
      return out;
    });
  }
  if (name == "dictsort") {
    if (v.kind() != K::Dict) fail("TypeError: dictsort expects a mapping");
    const bool caseSensitive = flag(args, 0, "case_sensitive");
    const std::string by = arg(args, 1, "by").isNone() ? "key" : str(arg(args, 1, "by"));
    if (by != "key" && by != "value") fail("FilterArgumentError: You can only sort by either \"key\" or \"value\"");
    ValueList pairs;
    for (const auto& [k, item] : v.asDict()) pairs.push_back(Value::list({k, item}, true));
    return Value::list(sorted(std::move(pairs), flag(args, 2, "reverse"), [&](const Value& p) {
      return sortKey(p.asList()[by == "key" ? 0 : 1], caseSensitive);
    }));
  }
  if (name == "list") return Value::list(iterate(v));
  if (name == "first") {
    const ValueList items = v.kind() == K::Iterator ? takeFromIterator(v, true) : iterate(v);
    return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
  }
  if (name == "last") {
    if (v.kind() == K::Iterator) fail("TypeError: '" + v.typeName() + "' object is not reversible");
    const ValueList items = iterate(v);
    return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
  }
  if (name == "reverse") {
    if (v.isString()) {
      std::u32string cps = toCodePoints(v.asString());
      std::reverse(cps.begin(), cps.end());
      return Value::string(toUtf8(cps));
    }
    // reversed(): an iterator over lists, tuples, dicts (and Undefined); others become a list.
    const bool reversible = v.kind() == K::List || v.kind() == K::Dict || v.isUndefined();
    ValueList items = iterate(v);
    std::reverse(items.begin(), items.end());
    if (!reversible) return Value::list(std::move(items));
    const char* type = v.kind() == K::Dict ? "dict_reversekeyiterator" : v.isTuple() || v.isUndefined() ? "reversed" : "list_reverseiterator";
    return Value::iterator(type, std::move(items));
  }
  if (name == "join") {
    const Value& sepArg = arg(args, 0, "d");
    const std::string sep = sepArg.isNone() ? std::string() : str(sepArg);
    const Value& attribute = arg(args, 1, "attribute");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(v)) {
      if (!first) out += sep;
      first = false;
      out += str(attribute.isNone() ? item : attributePath(item, attribute));
      if (out.size() > kMaxStringBytes) fail("string too long");
    }
    return Value::string(std::move(out));
  }
  if (name == "map") return lazily("generator", [&] { return mapItems(interp, v, args); });
  if (name == "select" || name == "reject")
    return lazily("generator", [&] { return selectItems(interp, v, args, false, name == "select"); });
  if (name == "selectattr" || name == "rejectattr")
    return lazily("generator", [&] { return selectItems(interp, v, args, true, name == "selectattr"); });
  if (name == "sort" || name == "unique" || name == "min" || name == "max") {
    const bool caseSensitive = flag(args, name == "sort" ? 1 : 0, "case_sensitive");
    const Value& attribute = arg(args, name == "sort" ? 2 : 1, "attribute");
    auto key = [&](const Value& item) { return sortKey(attribute.isNone() ? item : attributePath(item, attribute), caseSensitive); };
    if (name == "sort") return Value::list(sorted(iterate(v), flag(args, 0, "reverse"), key));
    ValueList items;
    try {
      items = iterate(v);
    } catch (const RuntimeFailure& f) {
      if (name == "unique") return Value::iterator("generator", {}, f.what());
      throw;
    }
    if (name == "unique") {
      return lazily("generator", [&] {
        ValueList out, seen;
        for (const Value& item : items) {
          const Value k = key(item);
          if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return valuesEqual(s, k); })) seen.push_back(k), out.push_back(item);
        }
        return out;
      });
    }
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    const ValueList order = sorted(items, name == "max", key);
    return order.front();
  }
  if (name == "sum") {
    const Value& attribute = arg(args, 0, "attribute");
    Value total = argument(args, 1, "start") ? arg(args, 1, "start") : Value::integer(0);
    for (const Value& item : iterate(v)) total = binaryOp("+", total, attribute.isNone() ? item : attributePath(item, attribute));
    return total;
  }
  if (name == "abs") {
    if (!v.isNumber()) fail("TypeError: bad operand type for abs(): '" + v.typeName() + "'");
    if (v.kind() == K::Float) return Value::floating(std::fabs(v.asDouble()));
    if (v.asInt() == INT64_MIN) fail("integer overflow");
    return Value::integer(std::llabs(v.asInt()));
  }
  if ((name == "int" || name == "float") && v.isUndefined()) failUndefined(v);  // int(Undefined) raises
  if (name == "int") return toInt(v, args);
  if (name == "float") return toFloat(v, args);
  if (name == "round") return roundFilter(v, args);
  if (name == "indent") return indentFilter(v, args);
  if (name == "wordcount") {
    std::int64_t words = 0;
    bool inWord = false;
    for (const char32_t c : toCodePoints(str(v))) {
      const bool wordChar = c == '_' || (c < 0x80 ? std::isalnum(static_cast<int>(c)) != 0 : !isPythonSpace(c));
      if (wordChar && !inWord) ++words;
      inWord = wordChar;
    }
    return Value::integer(words);
  }
  if (name == "center") {
    const std::int64_t width = arg(args, 0, "width").isNone() ? 80 : arg(args, 0, "width").asInt();
    const std::string s = str(v);
    const auto n = static_cast<std::int64_t>(codePointCount(s));
    if (width <= n) return Value::string(s);
    const std::int64_t pad = width - n, left = pad / 2 + (pad & width & 1);
    return Value::string(std::string(static_cast<std::size_t>(left), ' ') + s + std::string(static_cast<std::size_t>(pad - left), ' '));
  }
  if (name == "attr") return getAttribute(v, str(arg(args, 0, "name")));
  if (name == "batch") return lazily("generator", [&] { return batchItems(v, args); });
  fail("No filter named '" + name + "'.");
}

}  // namespace dfi::jinja::detail
