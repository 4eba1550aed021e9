#include "dfi/tokenizer/byte_level.h"

#include <array>

#include "dfi/base/utf8.h"

namespace dfi::tokenizer {
namespace {

constexpr bool mapsToItself(unsigned byte) {
  return (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || (byte >= 174 && byte <= 255);
}

constexpr char32_t kFirstShifted = 0x100;
constexpr unsigned kShiftedCount = 68;

struct Tables {
  std::array<char32_t, 256> toCodePoint{};
  std::array<std::uint8_t, kShiftedCount> shiftedToByte{};
};

constexpr Tables buildTables() {
  Tables t;
  unsigned next = 0;
  for (unsigned b = 0; b < 256; ++b) {
    if (mapsToItself(b)) {
      t.toCodePoint[b] = static_cast<char32_t>(b);
    } else {
      t.toCodePoint[b] = kFirstShifted + next;
      t.shiftedToByte[next++] = static_cast<std::uint8_t>(b);
    }
  }
  return t;
}

constexpr Tables kTables = buildTables();

}  // namespace

char32_t byteToCodePoint(std::uint8_t byte) { return kTables.toCodePoint[byte]; }

std::optional<std::uint8_t> codePointToByte(char32_t codePoint) {
  if (codePoint < 256 && mapsToItself(codePoint)) return static_cast<std::uint8_t>(codePoint);
  if (codePoint >= kFirstShifted && codePoint < kFirstShifted + kShiftedCount)
    return kTables.shiftedToByte[codePoint - kFirstShifted];
  return std::nullopt;
}

std::string byteLevelSpelling(std::string_view bytes) {
  std::string s;
  for (const char c : bytes) utf8::appendCodePoint(byteToCodePoint(static_cast<std::uint8_t>(c)), s);
  return s;
}

}  // namespace dfi::tokenizer
