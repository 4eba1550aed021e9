#include "python_strings.h"

#include "dfi/base/utf8.h"

namespace dfi::tokenizer::py {
namespace {

// The code points for which Python's str.isspace() is true.
bool isPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Length of the code point that ends at s[end-1] (s is valid UTF-8).
std::size_t lastCodePointLength(std::string_view s, std::size_t end) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  return end - start;
}

}  // namespace

std::string_view strip(std::string_view s) {
  std::size_t begin = 0;
  while (begin < s.size()) {
    std::size_t next = begin;
    if (!isPythonSpace(utf8::nextCodePoint(s, next))) break;
    begin = next;
  }
  std::size_t end = s.size();
  while (end > begin) {
    const std::size_t length = lastCodePointLength(s, end);
    std::size_t pos = end - length;
    if (!isPythonSpace(utf8::nextCodePoint(s, pos))) break;
    end -= length;
  }
  return s.substr(begin, end - begin);
}

std::string_view lstrip(std::string_view s, std::string_view chars) {
  const auto begin = s.find_first_not_of(chars);
  return begin == std::string_view::npos ? std::string_view() : s.substr(begin);
}

std::string_view rstrip(std::string_view s, std::string_view chars) {
  const auto last = s.find_last_not_of(chars);
  return last == std::string_view::npos ? std::string_view() : s.substr(0, last + 1);
}

std::string_view strip(std::string_view s, std::string_view chars) { return rstrip(lstrip(s, chars), chars); }

}  // namespace dfi::tokenizer::py
