// The replacement rule must be Unicode's "maximal subpart" substitution (what Rust's
// from_utf8_lossy, and so HF tokenizers, and Python's errors="replace" do).
#include <gtest/gtest.h>

#include "dfi/base/utf8.h"

using namespace dfi;

namespace {

// U+FFFD spelled out, so that expectations are plain literals.
#define FFFD "\xEF\xBF\xBD"

TEST(Utf8, LossyReplacesEachMaximalIllFormedSubpartOnce) {
  EXPECT_EQ(utf8::decodeLossy("plain ascii"), "plain ascii");
  EXPECT_EQ(utf8::decodeLossy("\xE4\xB8\xAD"), "\xE4\xB8\xAD");   // 中 stays
  EXPECT_EQ(utf8::decodeLossy("a\x80" "b"), "a" FFFD "b");    // lone continuation
  EXPECT_EQ(utf8::decodeLossy("\xF0\x9F\x98"), FFFD);              // truncated emoji: one
  EXPECT_EQ(utf8::decodeLossy("\xF0\x9F\x98" "A"), FFFD "A");
  EXPECT_EQ(utf8::decodeLossy("\xE0\x80"), FFFD FFFD);                  // overlong: E0 needs A0..BF
  EXPECT_EQ(utf8::decodeLossy("\xED\xA0\x80"), FFFD FFFD FFFD);              // surrogate half
  EXPECT_EQ(utf8::decodeLossy("\xC0\xAF"), FFFD FFFD);                  // C0 never starts a character
  EXPECT_EQ(utf8::decodeLossy("\xF4\x90\x80\x80"), FFFD FFFD FFFD FFFD);          // above U+10FFFF
  EXPECT_EQ(utf8::decodeLossy("\xE4\xB8\xE4\xB8\xAD"), FFFD "\xE4\xB8\xAD");
  EXPECT_EQ(utf8::decodeLossy(std::string("\0x", 2)), std::string("\0x", 2));
}

TEST(Utf8, FirstInvalidByte) {
  EXPECT_FALSE(utf8::firstInvalidByte("h\xC3\xA9llo"));
  EXPECT_EQ(utf8::firstInvalidByte("ab\xFF"), 2u);
  EXPECT_EQ(utf8::firstInvalidByte("ab\xC3"), 2u);  // truncated at the end is invalid too
}

TEST(Utf8, IncompleteTailIsOnlyAWellFormedPrefix) {
  EXPECT_EQ(utf8::incompleteTailLength(""), 0u);
  EXPECT_EQ(utf8::incompleteTailLength("abc"), 0u);
  EXPECT_EQ(utf8::incompleteTailLength("a\xE4"), 1u);
  EXPECT_EQ(utf8::incompleteTailLength("a\xE4\xB8"), 2u);
  EXPECT_EQ(utf8::incompleteTailLength("\xF0\x9F\x98"), 3u);
  EXPECT_EQ(utf8::incompleteTailLength("\xE4\xB8\xAD"), 0u);  // complete
  EXPECT_EQ(utf8::incompleteTailLength("\xE0\x80"), 0u);      // already ill-formed
  EXPECT_EQ(utf8::incompleteTailLength("\x80\x80\x80"), 0u);
}

}  // namespace
