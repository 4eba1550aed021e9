// Ids and decoded text must equal the reference packages exactly on the tokenizers the other
// families ship (tests/oracle/gen_tokenizer_family_cases.py): tiktoken rank files loaded from
// their directory (Llama 3, gpt-oss, Kimi's layout) and the same ranks converted to
// tokenizer.json by transformers, both against tiktoken; SentencePiece-style tokenizer.json files
// (Gemma, Llama 2, Metaspace forms) against HF tokenizers. Streaming decode must give the same text.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "dfi/base/error.h"
#include "dfi/tokenizer/incremental_decoder.h"
#include "dfi/tokenizer/tokenizer.h"
#include "oracle_cases.h"

using namespace dfi::tokenizer;
using dfi::tokenizer::testing::oracleDir;
using dfi::tokenizer::testing::readJsonl;
using nlohmann::json;

namespace {

const std::filesystem::path kData = std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers";

std::filesystem::path familyDir() { return oracleDir().empty() ? oracleDir() : oracleDir() / "families"; }

json manifest() {
  std::ifstream in(familyDir() / "manifest.json");
  return json::parse(in);
}

// Every form the generator wrote for `name`: a directory (fromDirectory) or a tokenizer.json.
// Loaded once per test program: the large vocabularies take a second or more each in Debug.
std::vector<std::pair<std::string, Tokenizer>> forms(const std::string& name) {
  static std::map<std::string, std::vector<std::pair<std::string, Tokenizer>>> loaded;
  if (const auto it = loaded.find(name); it != loaded.end()) return it->second;
  auto& out = loaded[name];
  const json all = manifest();
  for (const json& form : all.at(name).at("forms")) {
    if (form.contains("dir")) out.emplace_back(form["dir"].get<std::string>(), Tokenizer::fromDirectory(form["dir"].get<std::string>()));
    else out.emplace_back(form["file"].get<std::string>(), Tokenizer::fromFile(form["file"].get<std::string>()));
  }
  return out;
}

std::string quoted(const std::string& s) { return json(s).dump().substr(0, 300); }

class FamilyOracle : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (oracleDir().empty()) GTEST_SKIP() << "DFI_TOKENIZER_ORACLE not set (run through ctest)";
  }
};

TEST_P(FamilyOracle, EncodeAndDecodeMatchTheReference) {
  const auto cases = readJsonl(familyDir() / ("cases_" + GetParam() + ".jsonl"));
  ASSERT_GE(cases.size(), 2000u);
  for (const auto& [source, tok] : forms(GetParam())) {
    SCOPED_TRACE(source);
    int failures = 0;
    ASSERT_GT(tok.vocabSize(), 256u);
    for (const json& c : cases) {
      const std::string text = c["text"];
      const auto expected = c["ids"].get<std::vector<std::int32_t>>();
      const auto ids = tok.encode(text);
      if (ids != expected && ++failures <= 10)
        ADD_FAILURE() << "encode " << quoted(text) << "\n  got  " << json(ids).dump().substr(0, 300) << "\n  want "
                      << json(expected).dump().substr(0, 300);
      const std::string decoded = tok.decode(expected);
      if (decoded != c["decoded"].get<std::string>() && ++failures <= 10)
        ADD_FAILURE() << "decode of " << quoted(text) << ": got " << quoted(decoded);
    }
    EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
  }
}

TEST_P(FamilyOracle, DecodeOfRandomIdsMatchesAndStreams) {
  const auto cases = readJsonl(familyDir() / ("decode_" + GetParam() + ".jsonl"));
  ASSERT_GE(cases.size(), 400u);
  for (const auto& [source, tok] : forms(GetParam())) {
    SCOPED_TRACE(source);
    int failures = 0;
    for (const json& c : cases) {
      const auto ids = c["ids"].get<std::vector<std::int32_t>>();
      const std::string whole = tok.decode(ids), skipped = tok.decode(ids, true);
      if (whole != c["text"].get<std::string>() && ++failures <= 10)
        ADD_FAILURE() << json(ids).dump() << ": got " << quoted(whole) << " want " << c["text"].dump();
      if (skipped != c["text_skip_special"].get<std::string>() && ++failures <= 10)
        ADD_FAILURE() << json(ids).dump() << " skipping specials: got " << quoted(skipped) << " want "
                      << c["text_skip_special"].dump();
      for (const bool skip : {false, true}) {
        IncrementalDecoder stream(tok, skip);
        std::string streamed;
        for (const auto id : ids) streamed += stream.push(id);
        streamed += stream.flush();
        if (streamed != (skip ? skipped : whole) && ++failures <= 10)
          ADD_FAILURE() << json(ids).dump() << " streamed (skip " << skip << "): " << quoted(streamed);
      }
    }
    EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
  }
}

TEST_P(FamilyOracle, EverySpecialTokenIsOneId) {
  const json m = manifest().at(GetParam());
  for (const auto& [source, tok] : forms(GetParam())) {
    SCOPED_TRACE(source);
    for (const std::string special : m.at("specials")) {
      const auto id = tok.tokenId(special);
      ASSERT_TRUE(id.has_value()) << special;
      EXPECT_EQ(tok.encode(special), std::vector<std::int32_t>{*id}) << special;
      EXPECT_TRUE(tok.isAdded(*id)) << special;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(References, FamilyOracle,
                         ::testing::Values("llama3", "gpt_oss", "gpt_oss_harmony", "kimi", "gemma_replace", "llama2_prepend",
                                           "metaspace_first", "metaspace_always_split", "metaspace_never_ignore_merges",
                                           "split_behaviors", "replace_unk_unfused"));

TEST(FamilyTokenizer, LlamaDirectoryLoadsFromItsRankFile) {
  const Tokenizer tok = Tokenizer::fromDirectory(kData / "llama3");
  EXPECT_EQ(tok.vocabSize(), 128256u);
  EXPECT_EQ(tok.tokenId("<|begin_of_text|>"), 128000);
  EXPECT_EQ(tok.tokenId("<|eot_id|>"), 128009);
  EXPECT_TRUE(tok.isSpecial(128255));
  EXPECT_EQ(tok.decode(tok.encode("Hello, world! 你好")), "Hello, world! 你好");
}

TEST(FamilyTokenizer, UnsupportedRankFilesAreNamed) {
  const auto dir = std::filesystem::temp_directory_path() / ("dfi_tiktoken_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // A SentencePiece model where Llama 3 keeps its rank file (Llama 2's layout) is not a rank file.
  std::filesystem::create_directories(dir / "original");
  std::ofstream(dir / "original" / "tokenizer.model", std::ios::binary) << std::string("\x12\x05<unk>\x18\x02\x0a", 10);
  try {
    Tokenizer::fromDirectory(dir);
    ADD_FAILURE() << "no error";
  } catch (const dfi::FormatError& e) {
    EXPECT_EQ(e.context().file, (dir / "original" / "tokenizer.model").string());
    EXPECT_EQ(e.context().item, "line 1");
  }
  std::filesystem::remove_all(dir / "original");
  std::ofstream(dir / "cl100k_base.tiktoken") << "IQ== 0\n";
  try {
    Tokenizer::fromDirectory(dir);
    ADD_FAILURE() << "no error";
  } catch (const dfi::ValidationError& e) {
    EXPECT_EQ(e.context().file, (dir / "cl100k_base.tiktoken").string());
    EXPECT_EQ(e.context().item, "file name");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
