#include "methods.h"

#include <algorithm>

#include "failure.h"
#include "interpreter.h"
#include "python_text.h"

namespace dfi::jinja::detail {

const Value* argument(const CallArgs& args, std::size_t index, const char* keyword) {
  if (index < args.positional.size()) return &args.positional[index];
  if (keyword)
    for (const auto& [k, v] : args.keyword)
      if (k == keyword) return &v;
  return nullptr;
}

void expectArgumentCount(const CallArgs& args, std::size_t most, const std::string& what) {
  if (args.positional.size() + args.keyword.size() > most)
    fail("TypeError: " + what + " takes at most " + std::to_string(most) + " argument(s)");
}

std::string stringArgument(const Value& v, const std::string& what) {
  if (!v.isString()) fail("TypeError: " + what + " must be str, not " + v.typeName());
  return v.asString();
}

ValueList splitString(const std::string& text, const Value& separator, std::int64_t maxSplit, bool fromRight) {
  std::vector<std::string> parts;
  if (separator.isNone() || separator.isUndefined()) {
    std::u32string cps = toCodePoints(text);
    if (fromRight) std::reverse(cps.begin(), cps.end());
    std::size_t i = 0;
    while (true) {
      while (i < cps.size() && isPythonSpace(cps[i])) ++i;
      if (i >= cps.size()) break;
      if (maxSplit >= 0 && static_cast<std::int64_t>(parts.size()) == maxSplit) {
        std::size_t end = cps.size();
        while (end > i && isPythonSpace(cps[end - 1])) --end;
        parts.push_back(toUtf8(std::u32string_view(cps).substr(i, end - i)));
        break;
      }
      std::size_t j = i;
      while (j < cps.size() && !isPythonSpace(cps[j])) ++j;
      parts.push_back(toUtf8(std::u32string_view(cps).substr(i, j - i)));
      i = j;
    }
    if (fromRight) {
      std::reverse(parts.begin(), parts.end());
      for (auto& p : parts) {
        std::u32string r = toCodePoints(p);
        std::reverse(r.begin(), r.end());
        p = toUtf8(r);
      }
    }
  } else {
    const std::string sep = stringArgument(separator, "separator");
    if (sep.empty()) fail("ValueError: empty separator");
    if (!fromRight) {
      std::size_t start = 0;
      while (maxSplit < 0 || static_cast<std::int64_t>(parts.size()) < maxSplit) {
        const auto at = text.find(sep, start);
        if (at == std::string::npos) break;
        parts.push_back(text.substr(start, at - start));
        start = at + sep.size();
      }
      parts.push_back(text.substr(start));
    } else {
      std::size_t end = text.size();
      std::vector<std::string> reversed;
      while (maxSplit < 0 || static_cast<std::int64_t>(reversed.size()) < maxSplit) {
        if (end < sep.size()) break;
        const auto at = text.rfind(sep, end - sep.size());
        if (at == std::string::npos) break;
        reversed.push_back(text.substr(at + sep.size(), end - at - sep.size()));
        end = at;
      }
      reversed.push_back(text.substr(0, end));
      parts.assign(reversed.rbegin(), reversed.rend());
    }
  }
  ValueList out;
  for (auto& p : parts) out.push_back(Value::string(std::move(p)));
  return out;
}

std::vector<std::string> splitLines(const std::string& text) {
  const std::u32string cps = toCodePoints(text);
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    const bool boundary = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
                          c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!boundary) continue;
    lines.push_back(toUtf8(std::u32string_view(cps).substr(start, i - start)));
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < cps.size()) lines.push_back(toUtf8(std::u32string_view(cps).substr(start)));
  return lines;
}

namespace {

std::int64_t codePointIndex(const std::string& text, std::size_t byteOffset) {
  return static_cast<std::int64_t>(codePointCount(std::string_view(text).substr(0, byteOffset)));
}

bool affixMatches(const std::string& text, const Value& affix, bool prefix) {
  auto one = [&](const Value& v) {
    const std::string a = stringArgument(v, prefix ? "startswith first arg" : "endswith first arg");
    return a.size() <= text.size() && (prefix ? text.compare(0, a.size(), a) == 0 : text.compare(text.size() - a.size(), a.size(), a) == 0);
  };
  if (affix.isTuple()) return std::any_of(affix.asList().begin(), affix.asList().end(), one);
  return one(affix);
}

bool allChars(const std::string& text, bool (*pred)(char32_t)) {
  const std::u32string cps = toCodePoints(text);
  return !cps.empty() && std::all_of(cps.begin(), cps.end(), pred);
}

Value stringMethod(const std::string& s, const std::string& name, CallArgs& args) {
  const Value none = Value::none();
  auto arg = [&](std::size_t i, const char* kw = nullptr) -> const Value& {
    const Value* v = argument(args, i, kw);
    return v ? *v : none;
  };
  auto required = [&](std::size_t i) -> const Value& {
    const Value* v = argument(args, i, nullptr);
    if (!v) fail("TypeError: str." + name + "() missing a required argument");
    return *v;
  };
  if (name == "startswith" || name == "endswith") return Value::boolean(affixMatches(s, required(0), name == "startswith"));
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const StripSide side = name == "strip" ? StripSide::Both : name == "lstrip" ? StripSide::Left : StripSide::Right;
    if (arg(0).isNone()) return Value::string(pythonStrip(s, side));
    const std::u32string chars = toCodePoints(stringArgument(arg(0), "strip arg"));
    return Value::string(pythonStrip(s, side, &chars));
  }
  if (name == "split" || name == "rsplit") {
    const Value& maxArg = arg(1, "maxsplit");
    const std::int64_t maxSplit = maxArg.isNone() ? -1 : maxArg.asInt();
    return Value::list(splitString(s, arg(0, "sep"), maxSplit, name == "rsplit"));
  }
  if (name == "splitlines") {
    ValueList out;
    for (auto& line : splitLines(s)) out.push_back(Value::string(std::move(line)));
    return Value::list(std::move(out));
  }
  if (name == "replace") {
    const std::string from = stringArgument(required(0), "replace arg 1"), to = stringArgument(required(1), "replace arg 2");
    std::int64_t count = arg(2).isNone() ? -1 : arg(2).asInt();
    if (from.empty()) fail("str.replace with an empty pattern is not supported by this engine");
    std::string out;
    std::size_t start = 0;
    for (std::size_t at; count != 0 && (at = s.find(from, start)) != std::string::npos; --count) {
      out += s.substr(start, at - start) + to;
      start = at + from.size();
      if (out.size() > kMaxStringBytes) fail("string too long");
    }
    return Value::string(out + s.substr(start));
  }
  if (name == "lower") return Value::string(pythonLower(s));
  if (name == "upper") return Value::string(pythonUpper(s));
  if (name == "title") return Value::string(pythonTitle(s));
  if (name == "capitalize") return Value::string(pythonCapitalize(s));
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    const std::string sub = stringArgument(required(0), name + " arg");
    const auto at = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
    if (at == std::string::npos) {
      if (name.find("index") != std::string::npos) fail("ValueError: substring not found");
      return Value::integer(-1);
    }
    return Value::integer(codePointIndex(s, at));
  }
  if (name == "count") {
    const std::string sub = stringArgument(required(0), "count arg");
    if (sub.empty()) return Value::integer(static_cast<std::int64_t>(codePointCount(s)) + 1);
    std::int64_t n = 0;
    for (std::size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
    return Value::integer(n);
  }
  if (name == "join") {
    std::string out;
    bool first = true;
    for (const Value& item : iterate(required(0))) {
      if (!first) out += s;
      first = false;
      out += stringArgument(item, "sequence item");
      if (out.size() > kMaxStringBytes) fail("string too long");
    }
    return Value::string(std::move(out));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const std::string a = stringArgument(required(0), name + " arg");
    if (name == "removeprefix") return Value::string(s.rfind(a, 0) == 0 ? s.substr(a.size()) : s);
    const bool ends = a.size() <= s.size() && s.compare(s.size() - a.size(), a.size(), a) == 0;
    return Value::string(ends ? s.substr(0, s.size() - a.size()) : s);
  }
  if (name == "isdigit") return Value::boolean(allChars(s, [](char32_t c) { return c >= '0' && c <= '9'; }));
  if (name == "isspace") return Value::boolean(allChars(s, isPythonSpace));
  if (name == "isalpha") return Value::boolean(allChars(s, [](char32_t c) { return c < 0x80 && std::isalpha(static_cast<int>(c)) != 0; }));
  if (name == "isalnum") return Value::boolean(allChars(s, [](char32_t c) { return c < 0x80 && std::isalnum(static_cast<int>(c)) != 0; }));
  if (name == "islower") return Value::boolean(pythonLower(s) == s && pythonUpper(s) != s);
  if (name == "isupper") return Value::boolean(pythonUpper(s) == s && pythonLower(s) != s);
  fail("str." + name + "() is not supported by this engine");
}

Value dictMethod(const Value& d, const std::string& name, CallArgs& args) {
  if (name == "get") {
    expectArgumentCount(args, 2, "dict.get");
    const Value* key = argument(args, 0, nullptr);
    if (!key) fail("TypeError: get expected at least 1 argument, got 0");
    if (const Value* v = d.find(*key)) return *v;
    const Value* def = argument(args, 1, nullptr);
    return def ? *def : Value::none();
  }
  expectArgumentCount(args, 0, "dict." + name + "()");
  ValueList out;
  for (const auto& [k, v] : d.asDict()) {
    if (name == "items") out.push_back(Value::list({k, v}, true));
    else if (name == "keys") out.push_back(k);
    else if (name == "values") out.push_back(v);
  }
  if (name == "copy") return Value::dict(d.asDict());
  if (name == "items" || name == "keys" || name == "values") return Value::list(std::move(out));
  fail("dict." + name + "() is not supported by this engine");
}

Value listMethod(const Value& l, const std::string& name, CallArgs& args) {
  if (name == "copy") return Value::list(l.asList(), l.isTuple());
  const Value* x = argument(args, 0, nullptr);
  if (!x) fail("TypeError: list." + name + "() takes exactly one argument (0 given)");
  std::int64_t count = 0;
  for (std::size_t i = 0; i < l.asList().size(); ++i) {
    if (!valuesEqual(l.asList()[i], *x)) continue;
    if (name == "index") return Value::integer(static_cast<std::int64_t>(i));
    ++count;
  }
  if (name == "index") fail("ValueError: value is not in list");
  return Value::integer(count);
}

}  // namespace

Value boundMethod(const Value& object, const std::string& name) {
  return Value::callable(object.typeName() + "." + name, [object, name](Interpreter&, CallArgs& args) {
    switch (object.kind()) {
      case Value::Kind::String: return stringMethod(object.asString(), name, args);
      case Value::Kind::Dict: return dictMethod(object, name, args);
      default: return listMethod(object, name, args);
    }
  });
}

}  // namespace dfi::jinja::detail
