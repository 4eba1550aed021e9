#include "lexer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include "dfi/base/utf8.h"
#include "dfi/jinja/template.h"
#include "python_text.h"

namespace dfi::jinja::detail {

std::string describeLocation(const std::string& source, std::size_t offset, int& line, int& column) {
  offset = std::min(offset, source.size());
  line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
  const auto lineStart = source.rfind('\n', offset == 0 ? std::string::npos : offset - 1);
  const std::size_t start = (lineStart == std::string::npos || offset == 0) ? 0 : lineStart + 1;
  column = 1 + static_cast<int>(codePointCount(std::string_view(source).substr(start, offset - start)));
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

void throwSyntaxError(const std::string& sourceName, const std::string& source, std::size_t offset,
                      const std::string& message) {
  int line = 0, column = 0;
  throw TemplateSyntaxError(message, {sourceName, describeLocation(source, offset, line, column), std::nullopt});
}

namespace {

// jinja2 reads the source with universal newlines and drops a single trailing newline.
std::string normalizeNewlines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool startsWith(std::string_view s, std::size_t pos, std::string_view prefix) { return s.substr(pos, prefix.size()) == prefix; }

// Length of Python's \s* at pos (Unicode whitespace).
std::size_t whitespaceRun(std::string_view s, std::size_t pos) {
  std::size_t end = pos;
  while (end < s.size()) {
    std::size_t next = end;
    if (!isPythonSpace(utf8::nextCodePoint(s, next))) break;
    end = next;
  }
  return end - pos;
}

bool allWhitespace(std::string_view s) { return !s.empty() && whitespaceRun(s, 0) == s.size(); }

std::string rstripWhitespace(std::string_view s) { return pythonStrip(s, StripSide::Right); }

class Lexer {
 public:
  Lexer(std::string source, const std::string& sourceName) : src_(std::move(source)), name_(sourceName) {}

  LexedTemplate run() {
    while (pos_ < src_.size()) lexRoot();
    out_.push_back({TokenType::End, "", 0, 0, src_.size()});
    return {std::move(src_), std::move(out_)};
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& message) const { throwSyntaxError(name_, src_, at, message); }

  // One step of jinja2's root rule: text up to the next tag, whitespace control applied to it.
  void lexRoot() {
    std::size_t tag = pos_;
    while (true) {
      tag = src_.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= src_.size()) {
        emitData(src_.substr(pos_), pos_);
        pos_ = src_.size();
        return;
      }
      const char kind = src_[tag + 1];
      if (kind == '%' || kind == '{' || kind == '#') break;
      ++tag;
    }
    const char kind = src_[tag + 1];
    const char sign = tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : 0;
    std::string text = src_.substr(pos_, tag - pos_);
    if (sign == '-') {
      text = rstripWhitespace(text);
    } else if (sign != '+' && kind != '{') {  // lstrip_blocks: blocks and comments, not {{ }}
      const auto nl = text.rfind('\n');
      const std::size_t lineStart = nl == std::string::npos ? 0 : nl + 1;
      const bool lineStarting = pos_ == 0 || src_[pos_ - 1] == '\n';
      if ((lineStart > 0 || lineStarting) && allWhitespace(std::string_view(text).substr(lineStart)))
        text.resize(lineStart);
    }
    emitData(std::move(text), pos_);
    pos_ = tag + 2 + (sign ? 1 : 0);
    if (kind == '#') return lexComment(tag);
    if (kind == '%' && lexRaw(tag)) return;
    out_.push_back({kind == '%' ? TokenType::BlockBegin : TokenType::VariableBegin, "", 0, 0, tag});
    lexTag(kind == '%');
  }

  void emitData(std::string text, std::size_t at) {
    if (!text.empty()) out_.push_back({TokenType::Data, std::move(text), 0, 0, at});
  }

  // The end of a block or comment tag: '+%}' keeps what follows, '-%}' strips all whitespace
  // after it, a plain '%}' eats one newline (trim_blocks). Returns the length consumed or 0.
  std::size_t blockEndAt(std::size_t at, char closer) const {
    const std::string plain{closer, '}'};
    if (startsWith(src_, at, "+" + plain)) return 3;
    if (startsWith(src_, at, "-" + plain)) return 3 + whitespaceRun(src_, at + 3);
    if (startsWith(src_, at, plain)) return 2 + (at + 2 < src_.size() && src_[at + 2] == '\n' ? 1 : 0);
    return 0;
  }

  void lexComment(std::size_t begin) {
    if (pos_ >= src_.size()) return;  // jinja2 accepts a bare "{#" that ends the template
    for (std::size_t at = pos_; at < src_.size(); ++at) {
      if (const std::size_t n = blockEndAt(at, '#')) {
        pos_ = at + n;
        return;
      }
    }
    fail(begin, "Missing end of comment tag");
  }

  // {% raw %}...{% endraw %}: the body is text, with the same whitespace control at its end.
  bool lexRaw(std::size_t begin) {
    std::size_t at = pos_ + whitespaceRun(src_, pos_);
    if (!startsWith(src_, at, "raw")) return false;
    at += 3;
    const std::size_t afterWord = at;
    at += whitespaceRun(src_, at);
    std::size_t bodyStart;
    if (startsWith(src_, at, "-%}")) {
      bodyStart = at + 3 + whitespaceRun(src_, at + 3);
    } else if (startsWith(src_, at, "%}")) {
      bodyStart = at + 2;
    } else {
      return false;
    }
    if (afterWord < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[afterWord])) || src_[afterWord] == '_'))
      return false;  // a name like "rawness"
    for (std::size_t tag = src_.find("{%", bodyStart); tag != std::string::npos; tag = src_.find("{%", tag + 1)) {
      std::size_t p = tag + 2;
      const char sign = p < src_.size() && (src_[p] == '-' || src_[p] == '+') ? src_[p] : 0;
      if (sign) ++p;
      p += whitespaceRun(src_, p);
      if (!startsWith(src_, p, "endraw")) continue;
      p += 6;
      p += whitespaceRun(src_, p);
      const std::size_t endLen = blockEndAt(p, '%');
      if (!endLen) continue;
      std::string body = src_.substr(bodyStart, tag - bodyStart);
      if (sign == '-') {
        body = rstripWhitespace(body);
      } else if (sign != '+') {
        const auto nl = body.rfind('\n');
        const std::size_t lineStart = nl == std::string::npos ? 0 : nl + 1;
        const bool lineStarting = bodyStart > 0 && src_[bodyStart - 1] == '\n';
        if ((lineStart > 0 || lineStarting) && allWhitespace(std::string_view(body).substr(lineStart)))
          body.resize(lineStart);
      }
      emitData(std::move(body), bodyStart);
      pos_ = p + endLen;
      return true;
    }
    fail(begin, "Missing end of raw directive");
  }

  void lexTag(bool block) {
    std::vector<char> balance;
    while (true) {
      if (pos_ >= src_.size()) fail(pos_, block ? "unexpected end of template, expected '%}'" : "unexpected end of template, expected '}}'");
      if (balance.empty()) {
        if (block) {
          if (const std::size_t n = blockEndAt(pos_, '%')) {
            out_.push_back({TokenType::BlockEnd, "", 0, 0, pos_});
            pos_ += n;
            return;
          }
        } else if (startsWith(src_, pos_, "-}}")) {
          out_.push_back({TokenType::VariableEnd, "", 0, 0, pos_});
          pos_ += 3 + whitespaceRun(src_, pos_ + 3);
          return;
        } else if (startsWith(src_, pos_, "}}")) {
          out_.push_back({TokenType::VariableEnd, "", 0, 0, pos_});
          pos_ += 2;
          return;
        }
      }
      if (const std::size_t ws = whitespaceRun(src_, pos_)) {
        pos_ += ws;
        continue;
      }
      const char c = src_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        lexNumber();
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const std::size_t start = pos_;
        while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
        out_.push_back({TokenType::Name, src_.substr(start, pos_ - start), 0, 0, start});
      } else if (c == '\'' || c == '"') {
        lexString();
      } else {
        lexOperator(balance);
      }
    }
  }

  void lexOperator(std::vector<char>& balance) {
    static const std::array<std::string_view, 26> kOperators = {
        "//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]", "(", ")",
        "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"};
    for (const auto op : kOperators) {
      if (!startsWith(src_, pos_, op)) continue;
      if (op == "(" || op == "[" || op == "{") balance.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
      if (op == ")" || op == "]" || op == "}") {
        if (balance.empty()) fail(pos_, "unexpected '" + std::string(op) + "'");
        if (balance.back() != op[0])
          fail(pos_, "unexpected '" + std::string(op) + "', expected '" + std::string(1, balance.back()) + "'");
        balance.pop_back();
      }
      out_.push_back({TokenType::Operator, std::string(op), 0, 0, pos_});
      pos_ += op.size();
      return;
    }
    fail(pos_, "unexpected char " + stringRepr(src_.substr(pos_, 1)));
  }

  // Digits with optional '_' separators, as jinja2's integer and float rules allow.
  std::size_t digitRun(std::size_t at) const {
    std::size_t p = at;
    while (p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p]))) {
      ++p;
      if (p + 1 < src_.size() && src_[p] == '_' && std::isdigit(static_cast<unsigned char>(src_[p + 1]))) ++p;
    }
    return p - at;
  }

  void lexNumber() {
    const std::size_t start = pos_;
    const bool afterDot = start > 0 && src_[start - 1] == '.';
    std::size_t p = start + digitRun(start);
    bool isFloat = false;
    if (!afterDot) {
      std::size_t q = p;
      if (q + 1 < src_.size() && src_[q] == '.' && std::isdigit(static_cast<unsigned char>(src_[q + 1]))) {
        q += 1 + digitRun(q + 1);
        isFloat = true;
      }
      if (q < src_.size() && (src_[q] == 'e' || src_[q] == 'E')) {
        std::size_t e = q + 1;
        if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
        if (const std::size_t d = digitRun(e)) {
          q = e + d;
          isFloat = true;
        }
      }
      if (isFloat) p = q;
    }
    std::string digits;
    for (std::size_t i = start; i < p; ++i)
      if (src_[i] != '_') digits += src_[i];
    if (isFloat) {
      out_.push_back({TokenType::Float, digits, 0, std::strtod(digits.c_str(), nullptr), start});
    } else {
      if (src_[start] == '0' && p - start > 1) p = start + 1, digits = "0";  // "0" then the rest, as jinja2 splits it
      errno = 0;
      const long long v = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == ERANGE) fail(start, "integer literal too large");
      out_.push_back({TokenType::Integer, digits, v, 0, start});
    }
    pos_ = p;
  }

  void lexString() {
    const std::size_t start = pos_;
    const char quote = src_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) fail(start, "unexpected char " + stringRepr(std::string(1, quote)));
      const char c = src_[pos_];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) fail(start, "unterminated string");
      unescape(value);
    }
    ++pos_;
    out_.push_back({TokenType::String, std::move(value), 0, 0, start});
  }

  // Python's unicode-escape decoding, which jinja2 applies to string literals.
  void unescape(std::string& value) {
    const char e = src_[pos_ + 1];
    pos_ += 2;
    auto hex = [&](int width) {
      if (pos_ + static_cast<std::size_t>(width) > src_.size()) fail(pos_, "truncated escape in string literal");
      const std::string h = src_.substr(pos_, static_cast<std::size_t>(width));
      if (h.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) fail(pos_, "truncated escape in string literal");
      pos_ += static_cast<std::size_t>(width);
      const auto v = std::strtoul(h.c_str(), nullptr, 16);
      if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) fail(pos_, "escape is not a Unicode scalar value");
      utf8::appendCodePoint(static_cast<char32_t>(v), value);
    };
    switch (e) {
      case '\n': return;
      case '\\': value += '\\'; return;
      case '\'': value += '\''; return;
      case '"': value += '"'; return;
      case 'a': value += '\a'; return;
      case 'b': value += '\b'; return;
      case 'f': value += '\f'; return;
      case 'n': value += '\n'; return;
      case 'r': value += '\r'; return;
      case 't': value += '\t'; return;
      case 'v': value += '\v'; return;
      case 'x': return hex(2);
      case 'u': return hex(4);
      case 'U': return hex(8);
      case 'N': fail(pos_, "\\N{...} escapes are not supported");
      default: break;
    }
    if (e >= '0' && e <= '7') {
      unsigned v = static_cast<unsigned>(e - '0');
      for (int i = 0; i < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++i) v = v * 8 + static_cast<unsigned>(src_[pos_++] - '0');
      utf8::appendCodePoint(static_cast<char32_t>(v), value);
      return;
    }
    value += '\\';  // unknown escapes stay as written
    --pos_;
  }

  std::string src_;
  const std::string& name_;
  std::size_t pos_ = 0;
  std::vector<Token> out_;
};

}  // namespace

LexedTemplate lex(std::string_view text, const std::string& sourceName) {
  if (const auto bad = utf8::firstInvalidByte(text))
    throw TemplateSyntaxError("template is not valid UTF-8", {sourceName, "", *bad});
  return Lexer(normalizeNewlines(text), sourceName).run();
}

}  // namespace dfi::jinja::detail
