#include "python_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include <utf8proc.h>

#include "dfi/base/utf8.h"

namespace dfi::jinja::detail {

bool isPythonSpace(char32_t c) {
  // str.isspace(): the Unicode White_Space property plus the ASCII separators 0x1C-0x1F.
  if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

std::u32string toCodePoints(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  std::size_t pos = 0;
  while (pos < utf8.size()) out.push_back(utf8::nextCodePoint(utf8, pos));
  return out;
}

std::string toUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t c : text) utf8::appendCodePoint(c, out);
  return out;
}

std::size_t codePointCount(std::string_view utf8) {
  std::size_t n = 0;
  for (const char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string pythonStrip(std::string_view text, StripSide side, const std::u32string* chars) {
  const std::u32string cps = toCodePoints(text);
  auto strippable = [&](char32_t c) { return chars ? chars->find(c) != std::u32string::npos : isPythonSpace(c); };
  std::size_t begin = 0, end = cps.size();
  if (side != StripSide::Right)
    while (begin < end && strippable(cps[begin])) ++begin;
  if (side != StripSide::Left)
    while (end > begin && strippable(cps[end - 1])) --end;
  return toUtf8(std::u32string_view(cps).substr(begin, end - begin));
}

namespace {

std::string mapCase(std::string_view text, bool upper) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char32_t c = utf8::nextCodePoint(text, pos);
    const auto mapped = upper ? utf8proc_toupper(static_cast<utf8proc_int32_t>(c)) : utf8proc_tolower(static_cast<utf8proc_int32_t>(c));
    utf8::appendCodePoint(static_cast<char32_t>(mapped), out);
  }
  return out;
}

bool isCased(char32_t c) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

}  // namespace

std::string pythonLower(std::string_view text) { return mapCase(text, false); }
std::string pythonUpper(std::string_view text) { return mapCase(text, true); }

std::string pythonTitle(std::string_view text) {
  // str.title(): a cased character after an uncased one starts a word.
  std::string out;
  bool previousCased = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char32_t c = utf8::nextCodePoint(text, pos);
    const auto cp = static_cast<utf8proc_int32_t>(c);
    const char32_t mapped = static_cast<char32_t>(previousCased ? utf8proc_tolower(cp) : utf8proc_totitle(cp));
    utf8::appendCodePoint(mapped, out);
    previousCased = isCased(c);
  }
  return out;
}

std::string pythonCapitalize(std::string_view text) {
  std::u32string cps = toCodePoints(text);
  for (std::size_t i = 0; i < cps.size(); ++i) {
    const auto cp = static_cast<utf8proc_int32_t>(cps[i]);
    cps[i] = static_cast<char32_t>(i == 0 ? utf8proc_totitle(cp) : utf8proc_tolower(cp));
  }
  return toUtf8(cps);
}

std::string floatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest digits that round-trip, laid out as Python's repr does: positional for
  // exponents in [-4, 16), scientific otherwise, always with a '.0' or an exponent.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const auto ePos = sci.find('e');
  std::string mantissa = sci.substr(0, ePos);
  const int exponent = std::stoi(sci.substr(ePos + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (const char c : mantissa)
    if (c != '.') digits += c;
  std::string out = negative ? "-" : "";
  if (exponent >= 16 || exponent < -4) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char expBuf[16];
    std::snprintf(expBuf, sizeof expBuf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + expBuf;
  }
  if (exponent < 0) return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const auto intDigits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= intDigits) return out + digits + std::string(intDigits - digits.size(), '0') + ".0";
  return out + digits.substr(0, intDigits) + "." + digits.substr(intDigits);
}

namespace {

bool isPrintable(char32_t c) {
  // str.isprintable(): not in the categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (but space is).
  if (c == ' ') return true;
  if (c < 0x20 || c == 0x7F) return false;
  if (c < 0x7F) return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS: case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP: case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

void appendHexEscape(char prefix, char32_t c, int width, std::string& out) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*x", prefix, width, static_cast<unsigned>(c));
  out += buf;
}

}  // namespace

std::string stringRepr(std::string_view text) {
  const bool hasSingle = text.find('\'') != std::string_view::npos;
  const bool hasDouble = text.find('"') != std::string_view::npos;
  const char quote = hasSingle && !hasDouble ? '"' : '\'';
  std::string out(1, quote);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char32_t c = utf8::nextCodePoint(text, pos);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (isPrintable(c)) {
      utf8::appendCodePoint(c, out);
    } else if (c <= 0xFF) {
      appendHexEscape('x', c, 2, out);
    } else if (c <= 0xFFFF) {
      appendHexEscape('u', c, 4, out);
    } else {
      appendHexEscape('U', c, 8, out);
    }
  }
  return out + quote;
}

void appendJsonString(std::string_view text, bool ensureAscii, std::string& out) {
  out += '"';
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char32_t c = utf8::nextCodePoint(text, pos);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensureAscii && c >= 0x7F)) {
      if (c > 0xFFFF) {  // a surrogate pair, as json.dumps writes it
        const char32_t v = c - 0x10000;
        appendHexEscape('u', 0xD800 + (v >> 10), 4, out);
        appendHexEscape('u', 0xDC00 + (v & 0x3FF), 4, out);
      } else {
        appendHexEscape('u', c, 4, out);
      }
    } else {
      utf8::appendCodePoint(c, out);
    }
  }
  out += '"';
}

}  // namespace dfi::jinja::detail
