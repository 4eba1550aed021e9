// Ids and decoded text must equal Hugging Face tokenizers exactly, on the real Qwen3 tokenizer
// and on a small tokenizer trained with the Qwen3.5 regex (pair and legacy merge spellings,
// ignore_merges, no normalizer).
#include <gtest/gtest.h>

#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/incremental_decoder.h"
#include "dfi/tokenizer/tokenizer.h"
#include "oracle_cases.h"

using namespace dfi::tokenizer;
using dfi::tokenizer::testing::oracleDir;
using dfi::tokenizer::testing::readJsonl;
using nlohmann::json;

namespace {

const std::filesystem::path kQwen3Dir = std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3";

std::filesystem::path tokenizerPath(const std::string& name) {
  return name == "qwen3" ? kQwen3Dir / "tokenizer.json" : oracleDir() / name / "tokenizer.json";
}

std::string quoted(const std::string& s) { return json(s).dump(); }

class TokenizerOracle : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (oracleDir().empty()) GTEST_SKIP() << "DFI_TOKENIZER_ORACLE not set (run through ctest)";
  }
};

TEST_P(TokenizerOracle, EncodeAndDecodeMatchHuggingFace) {
  const Tokenizer tok = Tokenizer::fromFile(tokenizerPath(GetParam()));
  const auto cases = readJsonl(oracleDir() / ("cases_" + GetParam() + ".jsonl"));
  ASSERT_GE(cases.size(), 2000u);
  int failures = 0;
  for (const json& c : cases) {
    const std::string text = c["text"];
    const auto expected = c["ids"].get<std::vector<std::int32_t>>();
    const auto ids = tok.encode(text);
    if (ids != expected && ++failures <= 10)
      ADD_FAILURE() << "encode " << quoted(text) << "\n  got  " << json(ids).dump() << "\n  want " << json(expected).dump();
    const std::string decoded = tok.decode(expected);
    if (decoded != c["decoded"].get<std::string>() && ++failures <= 10)
      ADD_FAILURE() << "decode of " << quoted(text) << ": got " << quoted(decoded);
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
}

TEST_P(TokenizerOracle, DecodeOfRandomIdsMatchesHuggingFace) {
  const Tokenizer tok = Tokenizer::fromFile(tokenizerPath(GetParam()));
  const auto cases = readJsonl(oracleDir() / ("decode_" + GetParam() + ".jsonl"));
  ASSERT_FALSE(cases.empty());
  for (const json& c : cases) {
    const auto ids = c["ids"].get<std::vector<std::int32_t>>();
    EXPECT_EQ(tok.decode(ids), c["text"].get<std::string>()) << json(ids).dump();
    EXPECT_EQ(tok.decode(ids, true), c["text_skip_special"].get<std::string>()) << json(ids).dump();

    // Streaming the same ids must give the same text in the end.
    for (const bool skip : {false, true}) {
      IncrementalDecoder stream(tok, skip);
      std::string streamed;
      for (const auto id : ids) streamed += stream.push(id);
      streamed += stream.flush();
      EXPECT_EQ(streamed, tok.decode(ids, skip)) << json(ids).dump();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, TokenizerOracle, ::testing::Values("qwen3", "small", "small_legacy", "small_ignore_merges", "small_no_nfc"));

TEST(ChatTemplateOracle, Qwen3MatchesTransformersApplyChatTemplate) {
  if (oracleDir().empty()) GTEST_SKIP() << "DFI_TOKENIZER_ORACLE not set (run through ctest)";
  const auto chat = ChatTemplate::find(kQwen3Dir);
  ASSERT_TRUE(chat);
  const auto cases = readJsonl(oracleDir() / "chat_qwen3.jsonl");
  ASSERT_GE(cases.size(), 20u);
  for (const json& c : cases) {
    std::vector<ChatMessage> messages;
    for (const json& m : c["messages"]) messages.push_back({m["role"], m["content"]});
    EXPECT_EQ(chat->render(messages, {.addGenerationPrompt = c["add_generation_prompt"], .enableThinking = c["enable_thinking"]}),
              c["text"].get<std::string>())
        << c["messages"].dump() << " generation=" << c["add_generation_prompt"] << " thinking=" << c["enable_thinking"];
  }
}

}  // namespace
