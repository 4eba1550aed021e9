// merge: shards re-keyed without collisions, token tables unioned and checked;
// export: runs and steps as CSV and JSON (the metrics export: tests/core/analysis/test_run_metrics.cpp).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/session/export.h"
#include "dfi/session/merge.h"
#include "dfi/session/reader.h"
#include "session_test_util.h"

using namespace dfi::session;
namespace fs = std::filesystem;

TEST(SessionMerge, RekeysRunsStepsAndTensors) {
  const std::string a = testutil::freshPath("shard_a.dfi");
  const std::string b = testutil::freshPath("shard_b.dfi");
  const std::string all = testutil::freshPath("all.dfi");
  const auto shard = testutil::writeSmallSession(a, "a");
  testutil::writeSmallSession(b, "b");
  const std::vector<std::string> inputs{a, b};
  const MergeSummary summary = mergeSessions(inputs, all);
  EXPECT_EQ(summary.runs, 2);
  EXPECT_EQ(summary.steps, 120);
  EXPECT_EQ(summary.tokenStrings, 64);

  Reader merged(all), source(b);
  const auto runs = merged.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "a");
  EXPECT_EQ(runs[1].name, "b");
  EXPECT_EQ(runs[1].runId, 2);
  // Step 1 of shard b is step 61 of the merged file, under run 2, with its tree, statistic and tensor.
  const BlockRecords original = source.block(1);
  const BlockRecords moved = merged.block(61);
  StepRecord expected = original.step;
  expected.stepId = 61;
  expected.runId = 2;
  EXPECT_EQ(moved.step, expected);
  ASSERT_TRUE(moved.tree);
  EXPECT_EQ(moved.tree->nodeTokens, original.tree->nodeTokens);
  ASSERT_EQ(moved.statistics.size(), 1u);
  EXPECT_EQ(moved.statistics[0].values, original.statistics[0].values);
  ASSERT_EQ(moved.tensors.size(), 1u);
  EXPECT_EQ(moved.tensors[0].runId, 2);
  EXPECT_EQ(moved.tensors[0].tensorId, 4) << "shard a had three tensors";
  EXPECT_EQ(merged.readTensor(4).data, source.readTensor(1).data);
  EXPECT_EQ(merged.steps(2, 1).size(), static_cast<std::size_t>(shard.stepsPerPrompt));
  EXPECT_EQ(merged.annotations(2).at(0).stepId, 61);
  EXPECT_EQ(merged.annotations(0).size(), 2u) << "session-wide annotations stay session-wide";
  EXPECT_FALSE(fs::exists(all + ".partial"));
}

TEST(SessionMerge, DisagreeingTokenStringsNameBothFilesAndTheToken) {
  const std::string a = testutil::freshPath("tok_a.dfi");
  const std::string b = testutil::freshPath("tok_b.dfi");
  const std::string out = testutil::freshPath("tok_all.dfi");
  testutil::writeSmallSession(a);
  {
    Writer writer(b, {.mode = OpenMode::Overwrite});
    writer.addRun(synthetic::run("other tokenizer"));
    std::vector<TokenString> tokens{{.tokenId = 100, .raw = "x", .display = "x"},
                                    {.tokenId = 7, .raw = "different", .display = "different"}};
    writer.addTokenStrings(tokens);
  }
  try {
    mergeSessions(std::vector<std::string>{a, b}, out);
    FAIL() << "merged disagreeing token tables";
  } catch (const dfi::ValidationError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("token 7"), std::string::npos) << message;
    EXPECT_NE(message.find(a), std::string::npos) << message;
    EXPECT_NE(message.find(b), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

TEST(SessionMerge, RefusesToClobberOrToMergeIntoAnInput) {
  const std::string a = testutil::freshPath("clobber_a.dfi");
  testutil::writeSmallSession(a);
  EXPECT_THROW(mergeSessions(std::vector<std::string>{a}, a, true), dfi::UsageError);
  const std::string out = testutil::freshPath("clobber_out.dfi");
  mergeSessions(std::vector<std::string>{a}, out);
  EXPECT_THROW(mergeSessions(std::vector<std::string>{a}, out), dfi::UsageError);
  EXPECT_NO_THROW(mergeSessions(std::vector<std::string>{a}, out, true));
  const std::string text = testutil::freshPath("not_a_session.txt");
  std::ofstream(text) << std::string(200, 'x');
  EXPECT_THROW(mergeSessions(std::vector<std::string>{a, text}, out, true), dfi::FormatError);
}

TEST(SessionExport, StepsAndRunsInBothFormats) {
  Reader reader(testutil::writeKnownAcceptance());
  std::ostringstream csv;
  exportSession(reader, ExportWhat::Steps, ExportFormat::Csv, csv);
  std::istringstream lines(csv.str());
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header.rfind("step_id,run_id,prompt_id,step_index,mode,", 0), 0u) << header;
  EXPECT_NE(first.find(",\"causal, \"\"block\"\"\""), std::string::npos) << first;
  const std::string text = csv.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << "header and three steps";

  std::ostringstream json;
  exportSession(reader, ExportWhat::Steps, ExportFormat::Json, json);
  const auto steps = nlohmann::json::parse(json.str());
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0]["accept_length"], 4);
  EXPECT_EQ(steps[0]["topk_ids"].size(), 15u * 8u);

  std::ostringstream runs;
  exportSession(reader, ExportWhat::Runs, ExportFormat::Json, runs);
  const auto runsJson = nlohmann::json::parse(runs.str());
  EXPECT_EQ(runsJson[0]["settings_json"]["max_new_tokens"], 2048);  // one name for the field everywhere
  EXPECT_EQ(runsJson[0]["steps"], 3);
  EXPECT_THROW(parseExportWhat("everything"), dfi::UsageError);
}
