#include "percent_format.h"

#include <cmath>
#include <cstdio>

#include "builtins.h"
#include "failure.h"
#include "python_text.h"

namespace dfi::jinja::detail {
namespace {

struct Spec {
  bool left = false, zero = false, plus = false, space = false, alternate = false;
  int width = -1, precision = -1;
  char conversion = 's';
};

std::string pad(std::string body, const Spec& spec, bool numeric) {
  const auto length = static_cast<int>(codePointCount(body));
  if (spec.width <= length) return body;
  const std::size_t fill = static_cast<std::size_t>(spec.width - length);
  if (spec.left) return body + std::string(fill, ' ');
  if (spec.zero && numeric) {
    const std::size_t signLength = !body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ') ? 1 : 0;
    return body.substr(0, signLength) + std::string(fill, '0') + body.substr(signLength);
  }
  return std::string(fill, ' ') + body;
}

std::string formatNumber(const Value& v, const Spec& spec) {
  const char c = spec.conversion;
  if (!v.isNumber()) fail(std::string("TypeError: %") + c + " format: a real number is required, not " + v.typeName());
  std::string flags = spec.plus ? "+" : spec.space ? " " : "";
  if (spec.alternate) flags += "#";
  char buf[512];
  if (c == 'd' || c == 'i' || c == 'u' || c == 'x' || c == 'X' || c == 'o') {
    if ((c == 'x' || c == 'X' || c == 'o') && v.kind() == Value::Kind::Float)
      fail(std::string("TypeError: %") + c + " format: an integer is required, not float");
    if (v.kind() == Value::Kind::Float && !std::isfinite(v.asDouble())) fail("OverflowError: cannot convert float infinity or NaN to integer");
    const long long i = v.kind() == Value::Kind::Float ? static_cast<long long>(v.asDouble()) : v.asInt();
    const char conv = c == 'i' || c == 'u' ? 'd' : c;
    std::string fmt = "%" + flags + "ll" + conv;
    if (c == 'o' && spec.alternate) fmt = "%" + std::string(spec.plus ? "+" : spec.space ? " " : "") + "llo";
    std::snprintf(buf, sizeof buf, fmt.c_str(), i);
    std::string out = buf;
    if (c == 'o' && spec.alternate) out.insert(out.find_first_of("0123456789"), "0o");
    return out;
  }
  const int precision = spec.precision < 0 ? 6 : std::min(spec.precision, 100);
  const std::string fmt = "%" + flags + "." + std::to_string(precision) + c;
  std::snprintf(buf, sizeof buf, fmt.c_str(), v.asDouble());
  return buf;
}

}  // namespace

std::string percentFormat(const std::string& format, const Value& args) {
  const bool isTuple = args.isTuple();
  const bool isMapping = args.kind() == Value::Kind::Dict;
  const ValueList positional = isTuple ? args.asList() : ValueList{args};
  std::size_t next = 0;
  bool usedMapping = false;
  auto take = [&]() -> const Value& {
    if (next >= positional.size()) fail("TypeError: not enough arguments for format string");
    return positional[next++];
  };
  std::string out;
  std::size_t i = 0;
  while (i < format.size()) {
    const char ch = format[i++];
    if (ch != '%') {
      out += ch;
      continue;
    }
    if (i >= format.size()) fail("ValueError: incomplete format");
    const Value* value = nullptr;
    if (format[i] == '(') {
      const auto close = format.find(')', i);
      if (close == std::string::npos) fail("ValueError: incomplete format key");
      if (!isMapping) fail("TypeError: format requires a mapping");
      const Value* found = args.find(Value::string(format.substr(i + 1, close - i - 1)));
      if (!found) fail("KeyError: '" + format.substr(i + 1, close - i - 1) + "'");
      value = found;
      usedMapping = true;
      i = close + 1;
    }
    Spec spec;
    for (; i < format.size(); ++i) {
      const char f = format[i];
      if (f == '-') spec.left = true;
      else if (f == '0') spec.zero = true;
      else if (f == '+') spec.plus = true;
      else if (f == ' ') spec.space = true;
      else if (f == '#') spec.alternate = true;
      else break;
    }
    auto number = [&](int& target) {
      if (i < format.size() && format[i] == '*') {
        const Value& w = take();
        if (w.kind() != Value::Kind::Int) fail("TypeError: * wants int");
        target = static_cast<int>(std::min<std::int64_t>(w.asInt(), 1 << 20));
        ++i;
        return;
      }
      while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) {
        target = std::max(target, 0) * 10 + (format[i++] - '0');
        if (target > (1 << 20)) fail("ValueError: width too big");
      }
    };
    number(spec.width);
    if (i < format.size() && format[i] == '.') {
      ++i;
      spec.precision = 0;
      number(spec.precision);
    }
    while (i < format.size() && (format[i] == 'h' || format[i] == 'l' || format[i] == 'L')) ++i;
    if (i >= format.size()) fail("ValueError: incomplete format");
    spec.conversion = format[i++];
    if (spec.conversion == '%') {
      out += '%';
      continue;
    }
    const Value& v = value ? *value : take();
    std::string body;
    switch (spec.conversion) {
      case 's': case 'r': case 'a':
        body = spec.conversion == 's' ? toStr(v) : toRepr(v);
        if (spec.precision >= 0) body = toUtf8(toCodePoints(body).substr(0, static_cast<std::size_t>(spec.precision)));
        out += pad(body, spec, false);
        continue;
      case 'c':
        if (v.isString() && codePointCount(v.asString()) == 1) body = v.asString();
        else if (v.kind() == Value::Kind::Int && v.asInt() >= 0 && v.asInt() <= 0x10FFFF) body = toUtf8(std::u32string(1, static_cast<char32_t>(v.asInt())));
        else fail("TypeError: %c requires int or char");
        out += pad(body, spec, false);
        continue;
      case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
        out += pad(formatNumber(v, spec), spec, true);
        continue;
      default:
        fail(std::string("ValueError: unsupported format character '") + spec.conversion + "'");
    }
  }
  // Leftover positional arguments are an error, unless args is a mapping or another
  // non-tuple, non-string object with items (Python then does not check).
  const bool checksLeftovers = isTuple || !(isMapping || args.kind() == Value::Kind::List);
  if (checksLeftovers && !usedMapping && next < positional.size())
    fail("TypeError: not all arguments converted during string formatting");
  if (out.size() > kMaxStringBytes) fail("formatted string too long");
  return out;
}

}  // namespace dfi::jinja::detail
