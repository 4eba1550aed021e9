// The record readers of `dflash-eval import`: the documented JSONL and z-lab's records on
// hand-written files (their conventions: output = prefill token + every step's committed tokens),
// vLLM's and SGLang's on fixtures written from their producers' definitions
// (tests/oracle/gen_import_fixtures.py), the steps they become, and the refusals: a malformed
// line by file and line, an unknown field and an unsupported version by name.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/imports/imported_records.h"

namespace dfi::imports {
namespace {

namespace fs = std::filesystem;

fs::path writeFile(const std::string& name, const std::string& text) {
  const fs::path path = fs::path(testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path;
}

// The message of the error `read` throws, formatted as the CLI prints it.
template <typename ErrorType>
std::string errorOf(Format format, const fs::path& file) {
  try {
    readImportedRecords(format, file);
  } catch (const ErrorType& e) {
    return formatError(e.message(), e.context());
  }
  ADD_FAILURE() << "no error for " << file;
  return {};
}

TEST(ImportedRecords, JsonlRoundTripIntoSteps) {
  const auto file = writeFile("ok.jsonl",
                              R"({"format_version": 1, "prompt_id": 4, "prompt_ids": [1, 2], "output_ids": [10, 11, 12, 13, 14, 15], "acceptance_lengths": [3, 2], "draft_tokens": [[11, 12, 99], [14, 98, 97]], "block_size": 4}

{"prompt_ids": [3], "acceptance_lengths": [1, 4]}
)");
  const auto records = readImportedRecords(Format::Jsonl, file);
  ASSERT_EQ(records.responses.size(), 2u);
  EXPECT_EQ(records.blockSize, 4);
  const auto& first = records.responses[0];
  EXPECT_EQ(first.promptId, 4);
  EXPECT_EQ(first.line, 1u);
  EXPECT_EQ(records.responses[1].line, 3u);
  EXPECT_FALSE(records.responses[1].promptId);

  const auto steps = importedSteps(first, 2, 4);
  ASSERT_EQ(steps.size(), 2u);
  // Step 0: anchor = the prefill's token at position 2, commits 11 12 (drafts) and 13 (bonus).
  EXPECT_EQ(steps[0].anchorPosition, 2);
  EXPECT_EQ(steps[0].anchorToken, 10);
  EXPECT_EQ(steps[0].acceptedCount, 2);
  EXPECT_EQ(steps[0].acceptLength(), 3);
  EXPECT_EQ(steps[0].targetTokens, (std::vector<session::TokenId>{11, 12, 13}));  // all 3 slots known
  EXPECT_EQ(steps[0].bonusToken, 13);
  EXPECT_EQ(steps[0].draftTokens, (std::vector<session::TokenId>{11, 12, 99}));
  // Step 1 anchors on step 0's bonus; past its bonus, the target's tokens are not recorded.
  EXPECT_EQ(steps[1].anchorPosition, 5);
  EXPECT_EQ(steps[1].anchorToken, 13);
  EXPECT_EQ(steps[1].bonusToken, 15);
  EXPECT_EQ(steps[1].targetTokens, (std::vector<session::TokenId>{14, 15, kUnknownToken}));
  EXPECT_EQ(steps[1].draftTokens, (std::vector<session::TokenId>{14, 98, 97}));
  // A block smaller than a step, or than a recorded draft, is refused by line.
  EXPECT_THROW(importedSteps(first, 2, 2, "f.jsonl"), ValidationError);
  EXPECT_THROW(importedSteps(first, 2, 3, "f.jsonl"), ValidationError);

  // Without outputs: positions and counts only.
  const auto bare = importedSteps(records.responses[1], 1, 4);
  EXPECT_EQ(bare[1].anchorPosition, 2);
  EXPECT_EQ(bare[1].acceptedCount, 3);
  EXPECT_EQ(bare[1].acceptLength(), 4);
  EXPECT_EQ(bare[1].anchorToken, kUnknownToken);
  EXPECT_EQ(bare[1].targetTokens, std::vector<session::TokenId>(3, kUnknownToken));
}

TEST(ImportedRecords, ZlabRecordsSplitPromptAndOutput) {
  const auto file = writeFile("zlab.jsonl",
                              R"({"output_ids": [7, 8, 9, 20, 21, 22], "num_input_tokens": 3, "num_output_tokens": 3, "time_to_first_token": 0.1, "time_per_output_token": 0.01, "acceptance_lengths": [2]})"
                              "\n");
  const auto records = readImportedRecords(Format::Zlab, file);
  const auto& r = records.responses.at(0);
  EXPECT_EQ(r.promptTokens, (std::vector<session::TokenId>{7, 8, 9}));
  EXPECT_EQ(r.outputTokens, (std::vector<session::TokenId>{20, 21, 22}));
  EXPECT_FALSE(r.promptId);  // matched on its tokens: the benchmark shuffles its dataset
  // The accepted draft is known, the rest of the block is not.
  const auto step = importedSteps(r, 3, 4).at(0);
  EXPECT_EQ(step.draftTokens, (std::vector<session::TokenId>{21, kUnknownToken, kUnknownToken}));
  EXPECT_EQ(step.targetTokens, (std::vector<session::TokenId>{21, 22, kUnknownToken}));
  EXPECT_EQ(step.bonusToken, 22);
  EXPECT_NE(originText(records).find("z-lab dflash 0.1.0"), std::string::npos);
}

// Steps that commit more tokens than the record's output holds are refused by line, not read past
// the output (found by fuzz_user_files).
TEST(ImportedRecords, StepsCommittingPastTheOutputAreRefused) {
  const ImportedResponse r{.line = 4, .outputTokens = {20, 21, 22}, .acceptLengths = {2, 2}};
  try {
    importedSteps(r, 3, 4, "f.jsonl");
    ADD_FAILURE() << "read past the output";
  } catch (const ValidationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("f.jsonl: line 4: step 1 commits tokens up to output position 4"), std::string::npos) << what;
    EXPECT_NE(what.find("has 3 tokens"), std::string::npos) << what;
  }
}

TEST(ImportedRecords, MalformedLineNamesFileAndLine) {
  const auto file = writeFile("bad.jsonl", "{\"prompt_id\": 0, \"acceptance_lengths\": [1]}\n{\"prompt_id\": 1,\n");
  const auto message = errorOf<FormatError>(Format::Jsonl, file);
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("line 2"), std::string::npos) << message;

  const auto notList = writeFile("bad_lengths.jsonl", "{\"prompt_id\": 0, \"acceptance_lengths\": [1, 0]}\n");
  const auto lengths = errorOf<FormatError>(Format::Jsonl, notList);
  EXPECT_NE(lengths.find("line 1: acceptance_lengths[1]"), std::string::npos) << lengths;
}

TEST(ImportedRecords, UnknownFieldAndVersionAreNamed) {
  const auto typo = writeFile("typo.jsonl", "{\"prompt_id\": 0, \"acceptance_length\": [1]}\n");
  const auto message = errorOf<ValidationError>(Format::Jsonl, typo);
  EXPECT_NE(message.find("acceptance_length:"), std::string::npos) << message;
  EXPECT_NE(message.find("unknown field"), std::string::npos) << message;

  const auto zlab = writeFile("zlab_extra.jsonl",
                              "{\"output_ids\": [1, 2], \"num_input_tokens\": 1, \"acceptance_lengths\": [], \"speedup\": 2}\n");
  EXPECT_NE(errorOf<ValidationError>(Format::Zlab, zlab).find("speedup"), std::string::npos);

  const auto version = writeFile("v2.jsonl", "{\"format_version\": 2, \"prompt_id\": 0, \"acceptance_lengths\": [1]}\n");
  const auto v = errorOf<ValidationError>(Format::Jsonl, version);
  EXPECT_NE(v.find("format_version"), std::string::npos) << v;
  EXPECT_NE(v.find("version 2"), std::string::npos) << v;

  try {
    parseFormat("tgi");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("tgi"), std::string::npos);
  }
}

TEST(ImportedRecords, InconsistentCountsAreRefused) {
  // 1 + 2 + 3 committed tokens, but 5 recorded.
  const auto file = writeFile("short.jsonl", "{\"prompt_id\": 0, \"output_ids\": [1, 2, 3, 4, 5], \"acceptance_lengths\": [2, 3]}\n");
  EXPECT_NE(errorOf<ValidationError>(Format::Jsonl, file).find("output_ids"), std::string::npos);
  const auto block = writeFile("block.jsonl", "{\"prompt_id\": 0, \"acceptance_lengths\": [5], \"block_size\": 4}\n");
  EXPECT_NE(errorOf<ValidationError>(Format::Jsonl, block).find("block size 4"), std::string::npos);
}

nlohmann::json expected() {
  const char* dir = std::getenv("DFI_IMPORT_FIXTURES");
  if (!dir) return {};
  std::ifstream in(fs::path(dir) / "expected.json");
  return nlohmann::json::parse(in);
}

std::vector<int> sorted(std::vector<int> v) {
  std::ranges::sort(v);
  return v;
}

TEST(ImportedRecords, VllmRequestOutputs) {
  const auto want = expected();
  if (want.is_null()) GTEST_SKIP() << "DFI_IMPORT_FIXTURES not set";
  const auto records = readImportedRecords(Format::Vllm, fs::path(std::getenv("DFI_IMPORT_FIXTURES")) / "vllm.jsonl");
  ASSERT_EQ(records.responses.size(), want["lengths"].size());
  for (std::size_t i = 0; i < records.responses.size(); ++i) {
    const auto& r = records.responses[i];
    EXPECT_EQ(r.promptId, static_cast<session::PromptId>(i));  // request_id "i"
    EXPECT_EQ(r.promptTokens, want["prompts"][i].get<std::vector<session::TokenId>>());
    EXPECT_FALSE(r.stepOrderKnown);
    // The counts keep the multiset of the steps' lengths, not their order.
    EXPECT_EQ(r.acceptLengths, sorted(want["lengths"][i].get<std::vector<int>>()));
    int committed = 1;
    for (int n : r.acceptLengths) committed += n;
    EXPECT_EQ(static_cast<int>(r.outputTokens.size()), committed);
    // No tokens are placed on steps whose order is unknown.
    const auto steps = importedSteps(r, 3, 8);
    EXPECT_EQ(steps.at(0).targetTokens, std::vector<session::TokenId>(7, kUnknownToken));
    EXPECT_EQ(steps.at(0).anchorPosition, 3);
  }
  EXPECT_TRUE(records.ignoredFields.empty());
}

TEST(ImportedRecords, SglangResponses) {
  const auto want = expected();
  if (want.is_null()) GTEST_SKIP() << "DFI_IMPORT_FIXTURES not set";
  const auto records =
      readImportedRecords(Format::Sglang, fs::path(std::getenv("DFI_IMPORT_FIXTURES")) / "sglang.jsonl");
  ASSERT_EQ(records.responses.size(), want["lengths"].size());
  for (std::size_t i = 0; i < records.responses.size(); ++i) {
    EXPECT_EQ(records.responses[i].promptId, static_cast<session::PromptId>(i));
    EXPECT_EQ(records.responses[i].acceptLengths, sorted(want["lengths"][i].get<std::vector<int>>()));
  }
  // A field this reader does not know is reported by name, once per occurrence.
  EXPECT_EQ(std::ranges::count(records.ignoredFields, std::string("meta_info.weight_version")),
            static_cast<long>(want["lengths"].size()));
}

TEST(ImportedRecords, SglangCountsMustAgree) {
  const auto file = writeFile("sglang_bad.jsonl",
                              R"({"output_ids": [1, 2, 3], "meta_info": {"spec_verify_ct": 3, "spec_accept_histogram": [0, 1]}})"
                              "\n");
  EXPECT_NE(errorOf<ValidationError>(Format::Sglang, file).find("meta_info.spec_verify_ct"), std::string::npos);
}

}  // namespace
}  // namespace dfi::imports
