// Malformed or unsupported tokenizer.json files give a dfi::Error naming the file and the
// field, never a crash. Each case mutates a minimal valid file.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/tokenizer/byte_level.h"
#include "dfi/base/utf8.h"
#include "dfi/tokenizer/tokenizer.h"

using namespace dfi::tokenizer;
using nlohmann::json;

namespace {

std::string symbol(unsigned char byte) {
  std::string s;
  dfi::utf8::appendCodePoint(byteToCodePoint(byte), s);
  return s;
}

// 256 byte symbols, the merges "a b" -> "ab", "ab c" -> "abc", and <|im_start|> as special.
json minimalTokenizer() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[symbol(static_cast<unsigned char>(b))] = b;
  vocab["ab"] = 256;
  vocab["abc"] = 257;
  return {
      {"version", "1.0"},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", "\\p{L}+|\\s+|[^\\s\\p{L}]+"}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"vocab", vocab}, {"merges", json::array({json::array({"a", "b"}), json::array({"ab", "c"})})}}},
      {"added_tokens", {{{"id", 258}, {"content", "<|im_start|>"}, {"special", true}}}},
  };
}

class TokenizerFile : public ::testing::Test {
 protected:
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("dfi_tok_" + std::to_string(::getpid()) + "_" +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
  void TearDown() override { std::filesystem::remove(path); }

  void write(const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

  // Loads `doc` and returns the error it raised (fails the test if none or another type).
  template <class E>
  E loadError(const json& doc) {
    write(doc.dump());
    try {
      Tokenizer::fromFile(path);
    } catch (const E& e) {
      EXPECT_EQ(e.context().file, path.string());
      return e;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected error type: " << e.what();
      throw;
    }
    ADD_FAILURE() << "no error for " << doc.dump().substr(0, 200);
    throw std::runtime_error("no error");
  }
};

TEST_F(TokenizerFile, MinimalFileLoadsAndMergesByRank) {
  write(minimalTokenizer().dump());
  const Tokenizer tok = Tokenizer::fromFile(path);
  EXPECT_EQ(tok.encode("abc"), (std::vector<std::int32_t>{257}));
  EXPECT_EQ(tok.encode("abd<|im_start|>"), (std::vector<std::int32_t>{256, 'd', 258}));
  EXPECT_EQ(tok.vocabSize(), 259u);
}

TEST_F(TokenizerFile, LegacyMergeSpellingGivesTheSameResult) {
  json doc = minimalTokenizer();
  doc["model"]["merges"] = {"a b", "ab c"};
  write(doc.dump());
  EXPECT_EQ(Tokenizer::fromFile(path).encode("abcab"), (std::vector<std::int32_t>{257, 256}));
}

TEST_F(TokenizerFile, MissingFileIsAnIoError) {
  EXPECT_THROW(Tokenizer::fromFile(path.string() + ".absent"), dfi::IoError);
  EXPECT_THROW(Tokenizer::fromFile(std::filesystem::temp_directory_path()), dfi::IoError);
}

TEST_F(TokenizerFile, NotJsonIsAFormatErrorWithOffset) {
  write("{\"model\": {\"vocab\": {\"a\": 1,, }}}");
  try {
    Tokenizer::fromFile(path);
    FAIL() << "no error";
  } catch (const dfi::FormatError& e) {
    EXPECT_EQ(e.context().file, path.string());
    EXPECT_TRUE(e.context().byteOffset.has_value());
  }
}

TEST_F(TokenizerFile, EachMalformedFieldIsNamed) {
  struct Case {
    const char* pointer;  // expected ErrorContext::item
    std::function<void(json&)> mutate;
  };
  const std::vector<Case> cases = {
      {"/model/type", [](json& d) { d["model"]["type"] = "WordPiece"; }},
      {"/model", [](json& d) { d.erase("model"); }},
      {"/model/vocab", [](json& d) { d["model"]["vocab"] = json::array(); }},
      {"/model/vocab/ab", [](json& d) { d["model"]["vocab"]["ab"] = -3; }},
      {"/model/vocab/ab", [](json& d) { d["model"]["vocab"]["ab"] = "x"; }},
      {"/model/vocab", [](json& d) { d["model"]["vocab"].erase(symbol(' ')); }},
      {"/model/merges/1", [](json& d) { d["model"]["merges"][1] = "abc"; }},
      {"/model/merges/0", [](json& d) { d["model"]["merges"][0] = json::array({"a"}); }},
      {"/model/merges/1", [](json& d) { d["model"]["merges"][1] = json::array({"ab", "zz"}); }},
      {"/model/merges/0", [](json& d) { d["model"]["merges"][0] = 5; }},
      {"/model/dropout", [](json& d) { d["model"]["dropout"] = 0.1; }},
      {"/model/byte_fallback", [](json& d) { d["model"]["byte_fallback"] = true; }},
      {"/normalizer/type", [](json& d) { d["normalizer"] = {{"type", "NFKC"}}; }},
      {"/pre_tokenizer/pretokenizers/0/pattern/Regex", [](json& d) { d["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed"; }},
      {"/pre_tokenizer/pretokenizers/0/behavior", [](json& d) { d["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways"; }},
      {"/pre_tokenizer/pretokenizers/1/use_regex", [](json& d) { d["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = true; }},
      {"/pre_tokenizer/type", [](json& d) { d["pre_tokenizer"] = {{"type", "Whitespace"}}; }},
      {"/decoder/type", [](json& d) { d["decoder"] = {{"type", "WordPiece"}}; }},
      // TemplateProcessing is accepted (it only acts when special tokens are added, which encode() never does).
      {"/post_processor/type", [](json& d) { d["post_processor"] = {{"type", "RobertaProcessing"}}; }},
      {"/added_tokens/0/lstrip", [](json& d) { d["added_tokens"][0]["lstrip"] = true; }},
      {"/added_tokens/0/content", [](json& d) { d["added_tokens"][0]["content"] = ""; }},
      {"/added_tokens/0/id", [](json& d) { d["added_tokens"][0]["id"] = "258"; }},
  };
  for (const Case& c : cases) {
    json doc = minimalTokenizer();
    c.mutate(doc);
    const auto e = loadError<dfi::ValidationError>(doc);
    EXPECT_EQ(e.context().item, c.pointer) << e.what();
  }
}

// SentencePiece-style (Gemma): characters as symbols, <0xNN> byte fallback, "▁" for spaces.
json sentencePieceTokenizer() {
  json vocab = {{"<unk>", 0}, {"\u2581", 1}, {"a", 2}, {"b", 3}, {"\u2581a", 4}};
  const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) vocab[std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">"] = 5 + b;
  return {
      {"normalizer", {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}},
      {"pre_tokenizer", nullptr},
      {"decoder", {{"type", "Sequence"}, {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                                                       {{"type", "ByteFallback"}}, {{"type", "Fuse"}}}}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({json::array({"\u2581", "a"})})},
                 {"byte_fallback", true}, {"unk_token", "<unk>"}, {"fuse_unk", true}}},
  };
}

TEST_F(TokenizerFile, SentencePieceStyleFileEncodesWithByteFallback) {
  write(sentencePieceTokenizer().dump());
  const Tokenizer tok = Tokenizer::fromFile(path);
  EXPECT_EQ(tok.encode("b a"), (std::vector<std::int32_t>{3, 4}));
  EXPECT_EQ(tok.encode("\u00e9"), (std::vector<std::int32_t>{5 + 0xC3, 5 + 0xA9}));
  EXPECT_EQ(tok.decode(std::vector<std::int32_t>{3, 4, 5 + 0xC3, 5 + 0xA9}), "b a\u00e9");
  // A run of byte tokens that is not UTF-8 gives one U+FFFD per byte, as HF's ByteFallback.
  EXPECT_EQ(tok.decode(std::vector<std::int32_t>{5 + 'x', 5 + 0xC3, 2}), "\uFFFD\uFFFDa");
  EXPECT_EQ(tok.tokenText(4), " a");
  EXPECT_EQ(tok.tokenId("\u2581a"), 4);
}

TEST_F(TokenizerFile, UnsupportedSentencePieceFieldsAreNamed) {
  struct Case {
    const char* pointer;
    std::function<void(json&)> mutate;
  };
  const std::vector<Case> cases = {
      {"/normalizer/pattern", [](json& d) { d["normalizer"]["pattern"] = {{"Regex", " +"}}; }},
      {"/normalizer/type", [](json& d) { d["normalizer"] = {{"type", "Lowercase"}}; }},
      {"/pre_tokenizer/prepend_scheme",
       [](json& d) { d["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "sometimes"}}; }},
      {"/pre_tokenizer/replacement", [](json& d) { d["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "ab"}}; }},
      {"/decoder/decoders/3/stop",
       [](json& d) { d["decoder"]["decoders"].push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 1}}); }},
      {"/decoder/decoders/3/type",
       [](json& d) { d["decoder"]["decoders"].push_back({{"type", "Metaspace"}, {"replacement", "\u2581"}}); }},
      {"/decoder/type", [](json& d) { d["decoder"] = {{"type", "CTC"}}; }},
      {"/decoder", [](json& d) { d["decoder"] = {{"type", "ByteLevel"}}; }},
      {"/model/unk_token", [](json& d) { d["model"]["unk_token"] = "<missing>"; }},
  };
  for (const Case& c : cases) {
    json doc = sentencePieceTokenizer();
    c.mutate(doc);
    const auto e = loadError<dfi::ValidationError>(doc);
    EXPECT_EQ(e.context().item, c.pointer) << e.what();
  }
}

TEST_F(TokenizerFile, TopLevelArrayIsRejected) {
  loadError<dfi::ValidationError>(json::array({1, 2}));
}

}  // namespace
