// Writer -> file -> Reader: every record type comes back identical, ids are assigned as
// documented, and the closed file is one self-contained file.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dfi/base/error.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "session_test_util.h"

using namespace dfi::session;
namespace fs = std::filesystem;

TEST(SessionRoundTrip, EveryRecordComesBackIdentical) {
  const std::string path = testutil::freshPath("roundtrip.dfi");
  const auto written = testutil::writeSmallSession(path);

  Reader reader(path);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1u);
  RunRecord expectedRun = synthetic::run("run");
  expectedRun.runId = written.run;
  EXPECT_EQ(runs[0].target.configJson, expectedRun.target.configJson);
  EXPECT_EQ(runs[0].settingsJson, expectedRun.settingsJson);
  EXPECT_EQ(runs[0].topK, 8);
  EXPECT_EQ(reader.stepCount(written.run), written.prompts * written.stepsPerPrompt);

  const auto prompts = reader.prompts(written.run);
  ASSERT_EQ(prompts.size(), 3u);
  EXPECT_EQ(prompts[2].promptTokens, synthetic::prompt(written.run, 2).promptTokens);

  StepId expectedId = 1;
  for (PromptId p = 0; p < written.prompts; ++p) {
    const auto steps = reader.steps(written.run, p);
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(written.stepsPerPrompt));
    for (std::int32_t i = 0; i < written.stepsPerPrompt; ++i) {
      StepRecord expected = synthetic::step(written.run, p, i);
      expected.stepId = expectedId++;
      EXPECT_EQ(steps[i], expected);
      const auto block = reader.block(expected.stepId);
      EXPECT_EQ(block.step, expected);
      ASSERT_TRUE(block.tree.has_value());
      EXPECT_EQ(*block.tree, synthetic::tree(expected.stepId, 4));
      ASSERT_EQ(block.statistics.size(), 1u);
      EXPECT_EQ(block.statistics[0], synthetic::statistic(written.run, expected.stepId, 3, 15));
      EXPECT_EQ(block.tensors.size(), i == 0 ? 1u : 0u);
    }
  }
  EXPECT_EQ(reader.lastStepId(), expectedId - 1);
  // The summary scan sees what summarising each full record gives, in step-id order.
  std::vector<StepSummary> summaries, expectedSummaries;
  reader.forEachStepSummary(written.run, [&](const StepSummary& s) { summaries.push_back(s); });
  reader.forEachStep(written.run, [&](const StepRecord& s) { expectedSummaries.push_back(summarize(s)); });
  ASSERT_EQ(summaries.size(), static_cast<std::size_t>(written.prompts * written.stepsPerPrompt));
  EXPECT_EQ(summaries, expectedSummaries);
  EXPECT_EQ(summaries[0].draftSlots, 15);
  EXPECT_GT(summaries[0].garbledSlots, 0);
  const auto window = reader.steps(written.run, 1, 5, 3);
  ASSERT_EQ(window.size(), 3u);
  EXPECT_EQ(window[0].stepIndex, 5);
  EXPECT_EQ(reader.stepsSince(58, 100).size(), 2u);

  const auto tokens = reader.tokenStrings(std::vector<TokenId>{63, 7, 64, 0, 7});
  ASSERT_EQ(tokens.size(), 3u);
  const std::vector<TokenId> byId{0, 7, 63};
  for (std::size_t i = 0; i < byId.size(); ++i) EXPECT_EQ(tokens[i], synthetic::tokenStrings(64)[byId[i]]);
  EXPECT_TRUE(reader.tokenStrings({}).empty());
  EXPECT_EQ(reader.annotations(written.run).at(0).body, "first");
  EXPECT_EQ(reader.annotations(0).at(0).kind, AnnotationKind::Layout);
}

TEST(SessionRoundTrip, TensorsComeBackWholeAndByRows) {
  const std::string path = testutil::freshPath("tensor.dfi");
  // 300 x 300 float32 = 360 KB: three tiles, the last one short.
  const TensorRecord original = synthetic::attention(1, 1, 0, 2, 300);
  TensorId id = 0;
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    writer.addRun(synthetic::run("t"));
    id = writer.addTensor(original);
    TensorRecord empty{.info = {.runId = 1, .name = "empty", .shape = {0, 4}}};
    writer.addTensor(empty);
  }
  Reader reader(path);
  const TensorRecord back = reader.readTensor(id);
  EXPECT_EQ(back.info.shape, original.info.shape);
  EXPECT_EQ(back.info.layout, "query,key");
  EXPECT_EQ(back.data, original.data);
  const std::size_t rowBytes = 300 * sizeof(float);
  const auto rows = reader.readTensorRows(id, 110, 230);  // spans a tile boundary
  ASSERT_EQ(rows.size(), 120 * rowBytes);
  EXPECT_TRUE(std::equal(rows.begin(), rows.end(), original.data.begin() + 110 * rowBytes));
  EXPECT_TRUE(reader.readTensor(id + 1).data.empty());
  EXPECT_THROW(reader.readTensorRows(id, 10, 301), dfi::UsageError);
}

TEST(SessionRoundTrip, ClosedFileIsOneFileInRollbackJournalMode) {
  const std::string path = testutil::freshPath("single.dfi");
  testutil::writeSmallSession(path);
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_FALSE(fs::exists(path + "-shm"));
  std::ifstream in(path, std::ios::binary);
  char header[20];
  in.read(header, sizeof header);
  EXPECT_EQ(header[18], 1) << "file format write version 1 = rollback journal, 2 = WAL";
}

TEST(SessionWriter, CommitsInBatchesAndAReaderFollows) {
  const std::string path = testutil::freshPath("follow.dfi");
  std::vector<StepId> commits;
  Writer writer(path, {.mode = OpenMode::Overwrite, .batchRecords = 10, .batchInterval = std::chrono::hours(1),
                       .onCommit = [&](StepId last) { commits.push_back(last); }});
  const RunId run = writer.addRun(synthetic::run("live"));
  writer.flush();
  Reader reader(path);
  EXPECT_TRUE(reader.stepsSince(0).empty());
  for (std::int32_t i = 0; i < 25; ++i) writer.addStep(synthetic::step(run, 0, i));
  // Batches of 10 records after the flushed run: steps 10 and 20 close one; 21..25 pending.
  EXPECT_EQ(commits, (std::vector<StepId>{0, 10, 20}));
  EXPECT_TRUE(reader.refresh());
  EXPECT_EQ(reader.stepsSince(0).size(), 20u);
  EXPECT_FALSE(reader.refresh());
  writer.flush();
  EXPECT_TRUE(reader.refresh());
  const auto fresh = reader.stepsSince(20);
  ASSERT_EQ(fresh.size(), 5u);
  EXPECT_EQ(fresh.back().stepId, 25);
  EXPECT_EQ(writer.lastCommittedStep(), 25);
  // Closing while the follower still has the file open must neither fail nor lose anything.
  EXPECT_NO_THROW(writer.close());
  EXPECT_EQ(reader.lastStepId(), 25);
}

TEST(SessionWriter, RejectsBadRecordsWithoutLosingTheBatch) {
  const std::string path = testutil::freshPath("reject.dfi");
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    const RunId run = writer.addRun(synthetic::run("r"));
    writer.addStep(synthetic::step(run, 0, 0));
    EXPECT_THROW(writer.addStep(synthetic::step(run + 5, 0, 1)), dfi::ValidationError);
    StepRecord badTopK = synthetic::step(run, 0, 1);
    badTopK.topKProbs.pop_back();
    EXPECT_THROW(writer.addStep(badTopK), dfi::ValidationError);
    EXPECT_THROW(writer.addStep(synthetic::step(run, 0, 0)), dfi::ValidationError) << "duplicate block";
    writer.addTokenStrings(synthetic::tokenStrings(4));
    writer.addTokenStrings(synthetic::tokenStrings(4));  // same strings again: fine
    std::vector<TokenString> clash{{.tokenId = 2, .raw = "other", .display = "other"}};
    EXPECT_THROW(writer.addTokenStrings(clash), dfi::ValidationError);
    RunRecord badJson = synthetic::run("j");
    badJson.settingsJson = "{not json";
    EXPECT_THROW(writer.addRun(badJson), dfi::ValidationError);
    TensorRecord shortData = synthetic::attention(run, 1, 0, 0, 8);
    shortData.data.pop_back();
    EXPECT_THROW(writer.addTensor(shortData), dfi::ValidationError);
    writer.addStep(synthetic::step(run, 0, 1));
  }
  Reader reader(path);
  EXPECT_EQ(reader.stepsSince(0).size(), 2u);
  EXPECT_EQ(reader.tokenString(2)->raw, "tok2");
}

TEST(SessionWriter, AppendContinuesIdsAndCreateNewRefusesToClobber) {
  const std::string path = testutil::freshPath("append.dfi");
  testutil::writeSmallSession(path);
  EXPECT_THROW(Writer(path, {.mode = OpenMode::CreateNew}), dfi::UsageError);
  EXPECT_THROW(Writer(path + ".missing", {.mode = OpenMode::Append}), dfi::IoError);
  {
    Writer writer(path, {.mode = OpenMode::Append});
    const RunId second = writer.addRun(synthetic::run("second"));
    EXPECT_EQ(second, 2);
    EXPECT_EQ(writer.addStep(synthetic::step(second, 0, 0)), 61);
    writer.addAnnotation({.runId = second, .kind = AnnotationKind::Note, .body = "appended"});
  }
  Reader reader(path);
  EXPECT_EQ(reader.runs().size(), 2u);
  EXPECT_EQ(reader.step(61)->runId, 2);
}
