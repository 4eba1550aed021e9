#include <gtest/gtest.h>

#include <set>

#include "dfi/tokenizer/byte_level.h"

using namespace dfi::tokenizer;

TEST(ByteLevel, KnownMappings) {
  EXPECT_EQ(byteToCodePoint(' '), U'\u0120');   // 'Ġ'
  EXPECT_EQ(byteToCodePoint('\n'), U'\u010A');  // 'Ċ'
  EXPECT_EQ(byteToCodePoint('a'), U'a');
  EXPECT_EQ(byteToCodePoint(0), U'\u0100');
  EXPECT_EQ(byteToCodePoint(173), U'\u0143');   // soft hyphen is the last shifted byte
}

TEST(ByteLevel, IsABijection) {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = byteToCodePoint(static_cast<std::uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second);
    EXPECT_EQ(codePointToByte(cp), b);
  }
  EXPECT_FALSE(codePointToByte(U'\u0144'));
  EXPECT_FALSE(codePointToByte(U' '));
}
