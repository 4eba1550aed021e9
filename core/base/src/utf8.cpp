#include "dfi/base/utf8.h"

#include <cstdint>

namespace dfi::utf8 {
namespace {

// Result of reading one character at a position: `length` bytes form a valid character, or
// the first `length` bytes are the maximal ill-formed subpart (complete=false), or the input
// ended inside a character whose prefix so far is well-formed (truncated=true).
struct Step {
  std::size_t length = 0;
  bool valid = false;
  bool truncated = false;
};

// Allowed range of the second byte, which depends on the lead byte (Unicode table 3-7):
// it excludes overlong forms, surrogates and code points above U+10FFFF.
struct LeadInfo {
  int length;  // total sequence length, 0 for a byte that cannot start a character
  std::uint8_t secondLow, secondHigh;
};

LeadInfo leadInfo(std::uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

Step readOne(std::string_view s, std::size_t pos) {
  const auto lead = static_cast<std::uint8_t>(s[pos]);
  const LeadInfo info = leadInfo(lead);
  if (info.length == 1) return {1, true, false};
  if (info.length == 0) return {1, false, false};
  std::size_t i = 1;
  for (; i < static_cast<std::size_t>(info.length); ++i) {
    if (pos + i >= s.size()) return {i, false, true};
    const auto c = static_cast<std::uint8_t>(s[pos + i]);
    const bool ok = i == 1 ? (c >= info.secondLow && c <= info.secondHigh) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return {i, false, false};
  }
  return {i, true, false};
}

}  // namespace

std::optional<std::size_t> firstInvalidByte(std::string_view bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    // ASCII fast path: most text is mostly ASCII.
    if (static_cast<std::uint8_t>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Step step = readOne(bytes, pos);
    if (!step.valid) return pos;
    pos += step.length;
  }
  return std::nullopt;
}

void appendLossy(std::string_view bytes, std::string& out) {
  std::size_t pos = 0;
  std::size_t validStart = 0;
  while (pos < bytes.size()) {
    if (static_cast<std::uint8_t>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Step step = readOne(bytes, pos);
    if (step.valid) {
      pos += step.length;
      continue;
    }
    out.append(bytes.substr(validStart, pos - validStart));
    out.append(kReplacement);
    pos += step.length;
    validStart = pos;
  }
  out.append(bytes.substr(validStart));
}

std::string decodeLossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  appendLossy(bytes, out);
  return out;
}

std::size_t incompleteTailLength(std::string_view bytes) {
  // A character is at most 4 bytes, so only a lead byte among the last 3 can be unfinished.
  const std::size_t n = bytes.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<std::uint8_t>(bytes[n - back]);
    if (b < 0x80 || b >= 0xC0) {  // a lead byte (or ASCII): check it alone
      const Step step = readOne(bytes, n - back);
      return step.truncated ? back : 0;
    }
  }
  return 0;
}

void appendCodePoint(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

char32_t nextCodePoint(std::string_view s, std::size_t& pos) {
  const auto b0 = static_cast<std::uint8_t>(s[pos]);
  auto cont = [&](std::size_t i) { return static_cast<char32_t>(static_cast<std::uint8_t>(s[pos + i]) & 0x3F); };
  char32_t cp;
  if (b0 < 0x80) {
    cp = b0;
    pos += 1;
  } else if (b0 < 0xE0) {
    cp = (static_cast<char32_t>(b0 & 0x1F) << 6) | cont(1);
    pos += 2;
  } else if (b0 < 0xF0) {
    cp = (static_cast<char32_t>(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2);
    pos += 3;
  } else {
    cp = (static_cast<char32_t>(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    pos += 4;
  }
  return cp;
}

}  // namespace dfi::utf8
