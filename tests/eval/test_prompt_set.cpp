// Prompt files: every accepted key, malformed lines named by file and line (refused, or
// skipped with --skip-bad-prompts), and --limit applied before the shard split.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dfi/base/error.h"
#include "dfi/engine/prompt_set.h"

namespace fs = std::filesystem;
using namespace dfi;
using namespace dfi::engine;

namespace {

fs::path writeFile(const std::string& name, const std::string& text) {
  const fs::path file = fs::path(::testing::TempDir()) / ("dfi_prompts_" + name + ".jsonl");
  std::ofstream(file) << text;
  return file;
}

std::vector<std::int64_t> idsOf(const std::vector<PromptSpec>& prompts) {
  std::vector<std::int64_t> ids;
  for (const auto& p : prompts) ids.push_back(p.id);
  return ids;
}

}  // namespace

TEST(PromptFile, EveryKeyVariant) {
  const fs::path file = writeFile("keys", R"({"prompt": "p"}
{"question": "q", "dataset": "gsm8k"}
# a comment, then a blank line

{"turns": ["first", "second", "third"], "dataset": "mt-bench"}
{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}
{"ids": [1, 2, 3], "id": 40}
)");
  const auto set = readPromptSet(file);
  ASSERT_EQ(set.prompts.size(), 5u);
  EXPECT_TRUE(set.skipped.empty());
  const auto& p = set.prompts;
  EXPECT_EQ(p[0].messages.size(), 1u);
  EXPECT_EQ(p[0].messages[0].role, "user");
  EXPECT_EQ(p[0].messages[0].content, "p");
  EXPECT_EQ(p[1].messages[0].content, "q");
  EXPECT_EQ(p[1].dataset, "gsm8k");
  // turns: the first one alone, as its own conversation; the rest are counted, not run
  ASSERT_EQ(p[2].messages.size(), 1u);
  EXPECT_EQ(p[2].messages[0].content, "first");
  EXPECT_EQ(p[2].unevaluatedTurns, 2u);
  EXPECT_EQ(p[2].line, 5u);
  EXPECT_EQ(p[3].messages.size(), 2u);
  EXPECT_EQ(p[3].messages[0].role, "system");
  EXPECT_EQ(p[4].ids, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(idsOf(p), (std::vector<std::int64_t>{0, 1, 2, 3, 40}));
}

TEST(PromptFile, MalformedLineIsRefusedWithFileAndLine) {
  auto expectError = [](const std::string& bad, const std::string& field) {
    const fs::path file = writeFile("bad", std::string(R"({"prompt": "ok"})") + "\n\n" + bad + "\n");
    try {
      readPromptSet(file);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.context().file, file.string());
      EXPECT_NE(e.context().item.find("line 3"), std::string::npos) << e.what();
      EXPECT_NE(e.context().item.find(field), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    }
  };
  expectError("{\"question\": 7}", "question");
  expectError("{\"turns\": []}", "turns");
  expectError("{\"turns\": [\"a\", 2]}", "turns[1]");
  expectError("{\"question\": \"a\", \"turns\": [\"b\"]}", "prompt");
  expectError("{\"text\": \"no known key\"}", "prompt");
  expectError("[\"an array\"]", "line");
  expectError("{\"prompt\": \"unterminated", "line 3");
  expectError("{\"id\": 0, \"prompt\": \"duplicate id\"}", "id");
}

TEST(PromptFile, SkipBadPromptsKeepsTheRestAndListsEachLine) {
  const fs::path file = writeFile("skip", R"({"prompt": "a"}
{not json
{"question": ""}
{"prompt": "b", "id": 0}
{"turns": ["c"]}
)");
  const auto set = readPromptSet(file, {.skipMalformed = true});
  ASSERT_EQ(set.prompts.size(), 2u);
  EXPECT_EQ(set.prompts[1].messages[0].content, "c");
  EXPECT_EQ(set.prompts[1].line, 5u);
  ASSERT_EQ(set.skipped.size(), 3u);
  EXPECT_EQ(set.skipped[0].line, 2u);
  EXPECT_EQ(set.skipped[1].line, 3u);
  EXPECT_EQ(set.skipped[2].line, 4u) << "a duplicate id is skipped too";
  for (const auto& s : set.skipped) {
    EXPECT_NE(s.message.find(file.string()), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("line " + std::to_string(s.line)), std::string::npos) << s.message;
  }
  EXPECT_THROW(readPromptSet(writeFile("allbad", "{\n[]\n"), {.skipMalformed = true}), FormatError)
      << "nothing left to evaluate";
}

TEST(PromptSelection, LimitComesBeforeTheShardSplit) {
  std::vector<PromptSpec> prompts(10);
  for (std::size_t i = 0; i < prompts.size(); ++i) prompts[i].id = static_cast<std::int64_t>(i);
  EXPECT_EQ(idsOf(selectPrompts(prompts, 5, 0, 1)), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(idsOf(selectPrompts(prompts, 5, 0, 2)), (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(idsOf(selectPrompts(prompts, 5, 1, 2)), (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(idsOf(selectPrompts(prompts, 100, 2, 3)), (std::vector<std::int64_t>{2, 5, 8}));
  EXPECT_EQ(idsOf(selectPrompts(prompts, std::nullopt, 0, 4)), (std::vector<std::int64_t>{0, 4, 8}));
  EXPECT_TRUE(selectPrompts(prompts, 1, 1, 2).empty()) << "a shard may get nothing";
  EXPECT_THROW(selectPrompts(prompts, 0, 0, 1), UsageError);
  EXPECT_THROW(selectPrompts(prompts, 3, 2, 2), UsageError);
}
