// The public API on the real Qwen3 tokenizer (tests/data/tokenizers/qwen3): ids from
// docs/qwen.md 5.1, token text and display forms, input errors, incremental decoding.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "dfi/base/error.h"
#include "dfi/tokenizer/display_token.h"
#include "dfi/tokenizer/incremental_decoder.h"
#include "dfi/tokenizer/tokenizer.h"

using namespace dfi::tokenizer;

namespace {

const Tokenizer& qwen3() {
  static const Tokenizer tok = Tokenizer::fromDirectory(std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3");
  return tok;
}

TEST(TokenizerApi, AddedTokenIdsAndFlags) {
  const Tokenizer& tok = qwen3();
  EXPECT_EQ(tok.tokenId("<|endoftext|>"), 151643);
  EXPECT_EQ(tok.tokenId("<|im_start|>"), 151644);
  EXPECT_EQ(tok.tokenId("<|im_end|>"), 151645);
  EXPECT_EQ(tok.tokenId("<think>"), 151667);
  EXPECT_EQ(tok.tokenId("\u0120the"), 279);  // vocabulary entries use the byte-level spelling
  EXPECT_FALSE(tok.tokenId("no such token"));
  EXPECT_TRUE(tok.isSpecial(151644));
  EXPECT_FALSE(tok.isSpecial(151667));  // <think> is added but not special
  EXPECT_TRUE(tok.isAdded(151667));
  EXPECT_FALSE(tok.isSpecial(279));
  EXPECT_EQ(tok.vocabSize(), 151669u);
  ASSERT_TRUE(tok.chatTemplate());
  EXPECT_EQ(tok.chatTemplate()->source().filename(), "tokenizer_config.json");
}

TEST(TokenizerApi, EncodeDecodeRoundTrip) {
  const Tokenizer& tok = qwen3();
  EXPECT_EQ(tok.encode("hello world"), (std::vector<std::int32_t>{14990, 1879}));
  const std::string text = "<|im_start|>user\n多语言 text 😀<|im_end|>\n";
  const auto ids = tok.encode(text);
  EXPECT_EQ(ids.front(), 151644);
  EXPECT_EQ(tok.decode(ids), text);
  EXPECT_EQ(tok.decode(ids, true), "user\n多语言 text 😀\n");
  EXPECT_TRUE(tok.encode("").empty());
  const std::vector<std::int32_t> unknown{-1, 999999, 14990};
  EXPECT_EQ(tok.decode(unknown), "hello");
}

TEST(TokenizerApi, InvalidUtf8IsAFormatErrorWithOffset) {
  try {
    qwen3().encode("abc\xFF" "def");
    FAIL() << "no error";
  } catch (const dfi::FormatError& e) {
    EXPECT_EQ(e.context().item, "text");
    EXPECT_EQ(e.context().byteOffset, 3u);
  }
}

TEST(TokenizerApi, TokenTextAndDisplay) {
  const Tokenizer& tok = qwen3();
  EXPECT_EQ(tok.tokenText(220), " ");
  EXPECT_EQ(tok.displayToken(220), "\u00B7");
  EXPECT_EQ(tok.displayToken(198), "\u23CE");  // "\n"
  EXPECT_EQ(tok.displayToken(151644), "\u27E8im_start\u27E9");
  EXPECT_EQ(tok.displayToken(151667), "<think>");
  EXPECT_EQ(tok.displayToken(-5), "\u27E8unknown -5\u27E9");
  EXPECT_EQ(tok.displayToken(*tok.tokenId("\u0120the")), "\u00B7the");
  // A token holding only part of a character shows the bytes it has.
  const auto emoji = tok.encode("\xF0\x9F\xAB\xA0");  // 🫠: split over byte tokens
  ASSERT_GT(emoji.size(), 1u);
  EXPECT_EQ(tok.displayToken(emoji[0]).substr(0, 2), "\\x");
  EXPECT_EQ(displayBytes("a\tb\r\x01\x7F"), "a\u2192b\u240D\u2401\u2421");
  EXPECT_EQ(displaySpecial("<pad>"), "\u27E8pad\u27E9");
}

TEST(TokenizerApi, IncrementalDecoderHoldsBackPartialCharacters) {
  const Tokenizer& tok = qwen3();
  const std::string text = "ok \xF0\x9F\xAB\xA0 done";
  const auto ids = tok.encode(text);
  IncrementalDecoder stream(tok);
  std::string shown;
  for (const auto id : ids) {
    const std::string piece = stream.push(id);
    EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << "a replacement character was shown";
    shown += piece;
    EXPECT_EQ(text.substr(0, shown.size()), shown);
  }
  EXPECT_EQ(stream.pendingBytes(), 0u);
  EXPECT_EQ(shown + stream.flush(), text);

  // A stream cut inside a character flushes one replacement character, as decode() does.
  IncrementalDecoder cut(tok);
  std::string partial;
  for (std::size_t i = 0; i + 1 < ids.size() && tok.tokenText(ids[i]) != "\xA0"; ++i) partial += cut.push(ids[i]);
  EXPECT_GT(cut.pendingBytes(), 0u);
  EXPECT_EQ(partial + cut.flush(), "ok \xEF\xBF\xBD");
}

TEST(TokenizerApi, ConcurrentEncodesAgreeWithASerialOne) {
  // The piece cache is shared between threads; results must not depend on who filled it.
  const Tokenizer tok = Tokenizer::fromFile(std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3/tokenizer.json");
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i)
    texts.push_back("line " + std::to_string(i) + ": déjà vu 多语言 " + std::string(static_cast<std::size_t>(i % 7), ' ') + "end\n");
  const Tokenizer serial = Tokenizer::fromFile(std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3/tokenizer.json");
  std::vector<std::vector<std::int32_t>> expected;
  for (const auto& t : texts) expected.push_back(serial.encode(t));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::size_t k = (i * 7 + static_cast<std::size_t>(t) * 13) % texts.size();
        if (tok.encode(texts[k]) != expected[k]) ++mismatches;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
