// The record vocabulary: field tables that name each column once, the schema document generated
// from them, files of schema v1 (written before the runs gained typed mode, mask and window
// columns) still read and appended to, and a writer that keeps the ids of a copied stream.

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <sqlite3.h>

#include "dfi/base/error.h"
#include "dfi/session/file_identity.h"
#include "dfi/session/merge.h"
#include "dfi/session/reader.h"
#include "dfi/session/record_fields.h"
#include "dfi/session/schema_doc.h"
#include "dfi/session/writer.h"
#include "session_test_util.h"

namespace dfi::session {
namespace {

using testutil::freshPath;

// What a file written before schema 7 lacks: the steps' slot overlap and draft-vocabulary ids.
const std::string kDropSchema7 =
    "ALTER TABLE steps DROP COLUMN slot_overlap; ALTER TABLE steps DROP COLUMN draft_vocab_ids; ";

template <typename R>
std::set<std::string_view> namesOf() {
  std::set<std::string_view> names;
  forEachField<R>([&](const auto& f) { EXPECT_TRUE(names.insert(f.name).second) << f.name << " twice"; });
  return names;
}

TEST(SessionVocabulary, EveryTableNamesEachFieldOnce) {
  EXPECT_EQ(namesOf<RunRecord>().size(), 25u);
  EXPECT_EQ(namesOf<StepRecord>().size(), 25u);
  namesOf<PromptRecord>();
  namesOf<TreeRecord>();
  namesOf<StatisticRecord>();
  namesOf<TensorInfo>();
  namesOf<TokenString>();
  namesOf<Annotation>();
  EXPECT_EQ(fieldName(&StepRecord::draftTokens), "draft_tokens");
  EXPECT_EQ(fieldName(&StepRecord::topKIds), "topk_ids");
  EXPECT_EQ(fieldName(&RunRecord::slidingWindow), "sliding_window");
}

// SCHEMA.md's record tables are what schemaTablesMarkdown() generates. DFI_UPDATE_SCHEMA_DOC=1
// rewrites them after a field table changed.
TEST(SessionVocabulary, SchemaDocumentMatchesTheFieldTables) {
  const std::string path = std::string(DFI_SOURCE_DIR) + "/core/session/SCHEMA.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const std::string begin = "<!-- BEGIN generated: schemaTablesMarkdown() -->\n";
  const std::string end = "<!-- END generated -->";
  const auto from = text.find(begin);
  const auto to = text.find(end);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const std::string generated = schemaTablesMarkdown();
  const std::string documented = text.substr(from + begin.size(), to - from - begin.size());
  if (documented != generated && std::getenv("DFI_UPDATE_SCHEMA_DOC")) {
    text.replace(from + begin.size(), to - from - begin.size(), generated);
    std::ofstream(path) << text;
    return;
  }
  EXPECT_EQ(documented, generated) << "run this test with DFI_UPDATE_SCHEMA_DOC=1 to regenerate " << path;
}

// The Python reader's schema (python/dflash_inspector/schema.json) is what schemaTablesJson()
// generates; DFI_UPDATE_SCHEMA_DOC=1 rewrites it too.
TEST(SessionVocabulary, PythonReaderSchemaMatchesTheFieldTables) {
  const std::string path = std::string(DFI_SOURCE_DIR) + "/python/dflash_inspector/schema.json";
  std::stringstream buffer;
  buffer << std::ifstream(path).rdbuf();
  const std::string generated = schemaTablesJson();
  if (buffer.str() != generated && std::getenv("DFI_UPDATE_SCHEMA_DOC")) {
    std::ofstream(path) << generated;
    return;
  }
  EXPECT_EQ(buffer.str(), generated) << "run this test with DFI_UPDATE_SCHEMA_DOC=1 to regenerate " << path;
}

void execSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// A session as main wrote it before schema 2: the runs table had no mode, mask_variant or
// sliding_window; they lived in settings_json and the drafter's config only. Made here by
// dropping those columns from a current file and stamping version 1, which gives exactly the
// v1 layout of every other table.
std::string writeVersion1Session(const std::string& name) {
  const std::string path = freshPath(name);
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    RunRecord run = synthetic::run("v1");
    run.settingsJson = R"({"mode":"teacher-forced","mask_variant":"anchor-visible"})";
    run.drafter.configJson = R"({"layer_types":["sliding_attention","full_attention"],"sliding_window":512})";
    const RunId id = writer.addRun(run);
    writer.addPrompt(synthetic::prompt(id, 0));
    writer.addStep(synthetic::step(id, 0, 0));
    RunRecord plain = synthetic::run("v1-plain");
    plain.settingsJson = "";
    writer.addRun(plain);
    writer.close();
  }
  execSql(path,
          "ALTER TABLE runs DROP COLUMN mode; ALTER TABLE runs DROP COLUMN mask_variant; "
          "ALTER TABLE runs DROP COLUMN sliding_window; ALTER TABLE steps DROP COLUMN counted_length; "
          "ALTER TABLE runs DROP COLUMN temperature; ALTER TABLE runs DROP COLUMN sample; "
          "ALTER TABLE steps DROP COLUMN target_probs; ALTER TABLE steps DROP COLUMN draft_probs; "
          "ALTER TABLE steps DROP COLUMN accept_uniforms; ALTER TABLE steps DROP COLUMN candidate_ids; "
          "ALTER TABLE steps DROP COLUMN candidate_scores; ALTER TABLE steps DROP COLUMN chosen_candidates; "
          "ALTER TABLE steps DROP COLUMN draft_confidence; "
          "ALTER TABLE runs DROP COLUMN hypothesis; ALTER TABLE runs DROP COLUMN origin; " +
              kDropSchema7 + "PRAGMA user_version=1;");
  return path;
}

// Schema 3 added the steps' counted length; an older step counts its accepted drafts and bonus.
TEST(SessionVocabulary, CountedLengthsRoundTripAndOlderStepsCountInFull) {
  const std::string path = freshPath("counted.dfi");
  StepRecord cut, whole;
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    const RunId id = writer.addRun(synthetic::run("counted"));
    writer.addPrompt(synthetic::prompt(id, 0));
    cut = synthetic::step(id, 0, 0);
    cut.acceptedCount = 5;
    cut.countedLength = 3;  // a stop token at the third committed token
    whole = synthetic::step(id, 0, 1);
    whole.acceptedCount = 2;
    writer.addStep(cut);
    writer.addStep(whole);
    writer.close();
  }
  auto lengths = [](const std::string& file) {
    Reader reader(file);
    std::vector<std::int32_t> records, summaries;
    const RunId run = reader.runs().at(0).runId;
    reader.forEachStep(run, [&](const StepRecord& s) { records.push_back(s.acceptLength()); });
    reader.forEachStepSummary(run, [&](const StepSummary& s) { summaries.push_back(s.acceptLength()); });
    EXPECT_EQ(records, summaries);
    return records;
  };
  EXPECT_EQ(lengths(path), (std::vector<std::int32_t>{3, 3}));
  execSql(path, "ALTER TABLE steps DROP COLUMN counted_length; PRAGMA user_version=2;");
  EXPECT_EQ(lengths(path), (std::vector<std::int32_t>{6, 3}));
}

// Schema 4 added sampling (a run's temperature and repeat, a step's per-slot p, q and u) and
// DFlash2's candidates. An older file's runs are greedy single repeats and its steps carry none.
TEST(SessionVocabulary, SampledRunsAndStepsRoundTripAndOlderOnesAreGreedy) {
  const std::string path = freshPath("sampled.dfi");
  RunRecord run = synthetic::run("sampled");
  run.temperature = 0.7;
  run.sample = 3;
  StepRecord step;
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    const RunId id = writer.addRun(run);
    writer.addPrompt(synthetic::prompt(id, 0));
    step = synthetic::step(id, 0, 0);
    step.targetProbs = {0.5f, 0.25f, 1e-7f};
    step.draftProbs = {0.75f, 0.125f, 0.5f};
    step.acceptUniforms = {0.1f, 0.99f, 0.3f};
    step.candidateIds = {4, 9, 2, 7, 1, 3};  // 3 slots x k = 2
    step.candidateScores = {1.5f, -0.25f, 0.0f, 2.0f, 3.0f, 3.5f};
    step.chosenCandidates = {0, 1, 1};
    step.stepId = writer.addStep(step);
    writer.close();
  }
  {
    Reader reader(path);
    const RunRecord back = reader.runs().at(0);
    EXPECT_EQ(back.temperature, 0.7);
    EXPECT_EQ(back.sample, 3);
    std::vector<StepRecord> steps;
    reader.forEachStep(back.runId, [&](const StepRecord& s) { steps.push_back(s); });
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0], step);
  }
  execSql(path,
          "ALTER TABLE runs DROP COLUMN temperature; ALTER TABLE runs DROP COLUMN sample; "
          "ALTER TABLE steps DROP COLUMN target_probs; ALTER TABLE steps DROP COLUMN draft_probs; "
          "ALTER TABLE steps DROP COLUMN accept_uniforms; ALTER TABLE steps DROP COLUMN candidate_ids; "
          "ALTER TABLE steps DROP COLUMN candidate_scores; ALTER TABLE steps DROP COLUMN chosen_candidates; "
          "ALTER TABLE steps DROP COLUMN draft_confidence; "
          "ALTER TABLE runs DROP COLUMN hypothesis; ALTER TABLE runs DROP COLUMN origin; " +
              kDropSchema7 + "PRAGMA user_version=3;");
  Reader older(path);
  const RunRecord back = older.runs().at(0);
  EXPECT_EQ(back.temperature, 0.0);
  EXPECT_EQ(back.sample, 0);
  older.forEachStep(back.runId, [&](const StepRecord& s) {
    EXPECT_TRUE(s.targetProbs.empty() && s.draftProbs.empty() && s.acceptUniforms.empty());
    EXPECT_TRUE(s.candidateIds.empty() && s.candidateScores.empty() && s.chosenCandidates.empty());
    EXPECT_EQ(s.draftTokens, step.draftTokens);
  });
}

// Schema 5 added the hypothesis a diagnosis run tests and the origin of imported runs; a version 4
// file reads both as empty, and appending to it migrates it.
TEST(SessionVocabulary, DiagnosisAndImportFieldsRoundTripAndOlderRunsHaveNone) {
  const std::string path = testutil::freshPath("v4.dfi");
  RunRecord run = synthetic::run("drafter/diagnose/taps-shift:-1");
  run.hypothesis = "taps-shift:-1";
  run.origin = "vllm 0.10 per-request metrics: out.jsonl";
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    writer.addRun(run);
    writer.close();
  }
  {
    Reader reader(path);
    EXPECT_EQ(reader.runs().at(0).hypothesis, run.hypothesis);
    EXPECT_EQ(reader.runs().at(0).origin, run.origin);
  }
  execSql(path,
          "ALTER TABLE runs DROP COLUMN hypothesis; ALTER TABLE runs DROP COLUMN origin; "
          "ALTER TABLE steps DROP COLUMN draft_confidence; " + kDropSchema7 + "PRAGMA user_version=4;");
  {
    Reader older(path);
    EXPECT_EQ(older.runs().at(0).hypothesis, "");
    EXPECT_EQ(older.runs().at(0).origin, "");
  }
  {
    Writer writer(path, {.mode = OpenMode::Append});
    writer.addRun(run);
    writer.close();
  }
  Reader migrated(path);
  ASSERT_EQ(migrated.runs().size(), 2u);
  EXPECT_EQ(migrated.runs().at(0).hypothesis, "");
  EXPECT_EQ(migrated.runs().at(1).hypothesis, run.hypothesis);
}

// Schema 6 added DSpark's per-slot confidence, schema 7 the slots' overlap and the drafts' ids in
// a reduced draft vocabulary; an older file's steps carry none of them, and appending to it
// migrates it.
TEST(SessionVocabulary, PerSlotFieldsRoundTripAndOlderStepsHaveNone) {
  struct Older {
    int version;
    std::string drop;
  };
  for (const Older& older : {Older{5, "ALTER TABLE steps DROP COLUMN draft_confidence; " + kDropSchema7},
                             Older{6, kDropSchema7}}) {
    SCOPED_TRACE(older.version);
    const std::string path = testutil::freshPath("v" + std::to_string(older.version) + ".dfi");
    auto filled = [](StepRecord step) {
      step.draftConfidence = {0.875f, 0.5f, 1e-3f};
      step.slotOverlap = {0.75f, 0.25f, 0.0f};
      step.draftVocabIds = {4, 0, 17};
      return step;
    };
    StepRecord step;
    RunId id = 0;
    {
      Writer writer(path, {.mode = OpenMode::Overwrite});
      id = writer.addRun(synthetic::run("dspark"));
      writer.addPrompt(synthetic::prompt(id, 0));
      step = filled(synthetic::step(id, 0, 0));
      step.stepId = writer.addStep(step);
      writer.close();
    }
    {
      Reader reader(path);
      reader.forEachStep(id, [&](const StepRecord& s) { EXPECT_EQ(s, step); });
    }
    execSql(path, older.drop + "PRAGMA user_version=" + std::to_string(older.version) + ";");
    StepRecord later = filled(synthetic::step(id, 0, 1));
    {
      Writer writer(path, {.mode = OpenMode::Append});
      later.stepId = writer.addStep(later);
      writer.close();
    }
    Reader migrated(path);
    std::vector<StepRecord> steps;
    migrated.forEachStep(id, [&](const StepRecord& s) { steps.push_back(s); });
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0].draftConfidence.empty(), older.version < 6);
    EXPECT_TRUE(steps[0].slotOverlap.empty() && steps[0].draftVocabIds.empty());
    EXPECT_EQ(steps[1], later);
  }
}

TEST(SessionVocabulary, Version1FilesReadTheirRunsTyped) {
  Reader reader(writeVersion1Session("v1_read.dfi"));
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].mode, EvaluationMode::TeacherForced);
  EXPECT_EQ(runs[0].maskVariant, MaskVariant::AnchorVisible);
  EXPECT_EQ(runs[0].slidingWindow, 512);
  EXPECT_EQ(runs[1].mode, EvaluationMode::Live);  // no settings: the defaults
  EXPECT_EQ(runs[1].maskVariant, MaskVariant::Reference);
  EXPECT_EQ(runs[1].slidingWindow, 0);
  EXPECT_EQ(reader.stepCount(runs[0].runId), 1);
}

TEST(SessionVocabulary, AppendingToAVersion1FileMigratesIt) {
  const std::string path = writeVersion1Session("v1_append.dfi");
  {
    Writer writer(path, {.mode = OpenMode::Append});
    RunRecord run = synthetic::run("v2");
    run.mode = EvaluationMode::DDTree;
    run.slidingWindow = 64;
    writer.addRun(run);
    writer.close();
  }
  Reader reader(path);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].maskVariant, MaskVariant::AnchorVisible);  // migrated from settings_json
  EXPECT_EQ(runs[0].slidingWindow, 512);
  EXPECT_EQ(runs[2].mode, EvaluationMode::DDTree);
  EXPECT_EQ(runs[2].slidingWindow, 64);
}

TEST(SessionVocabulary, MergingAVersion1FileDerivesItsNewColumns) {
  const std::string v1 = writeVersion1Session("v1_merge_in.dfi");
  const std::string v2 = freshPath("v2_merge_in.dfi");
  testutil::writeSmallSession(v2);
  const std::string out = freshPath("v1_merge_out.dfi");
  const std::vector<std::string> inputs{v1, v2};
  mergeSessions(inputs, out, true);
  Reader reader(out);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].maskVariant, MaskVariant::AnchorVisible);
  EXPECT_EQ(runs[0].slidingWindow, 512);
}

TEST(SessionVocabulary, KeepIdsCopiesAStreamWithItsIds) {
  const std::string path = freshPath("keep_ids.dfi");
  Writer writer(path, {.mode = OpenMode::Overwrite, .keepIds = true});
  RunRecord run = synthetic::run("engine's");
  run.runId = 7;
  EXPECT_EQ(writer.addRun(run), 7);
  StepRecord step = synthetic::step(7, 0, 0);
  step.stepId = 41;
  EXPECT_EQ(writer.addStep(step), 41);
  step.stepIndex = 1;  // an id that is not above the last one is refused, naming the column
  try {
    writer.addStep(step);
    FAIL() << "a repeated step id was accepted";
  } catch (const dfi::ValidationError& e) {
    EXPECT_EQ(e.context().item, "steps.step_id");
  }
  writer.close();
  Reader reader(path);
  ASSERT_TRUE(reader.step(41));
  EXPECT_EQ(reader.step(41)->runId, 7);
}

// The GUI appending a second evaluation to a session: the engine's stream starts at id 1 again,
// and lands after the session's own records with every reference following its record.
TEST(SessionVocabulary, AppendedStreamIsShiftedPastTheSessionsIds) {
  const std::string path = freshPath("append_stream.dfi");
  {
    Writer first(path, {.mode = OpenMode::Overwrite});
    const RunId run = first.addRun(synthetic::run("first"));
    first.addPrompt(synthetic::prompt(run, 0));
    const StepId s1 = first.addStep(synthetic::step(run, 0, 0));
    first.addStep(synthetic::step(run, 0, 1));
    first.addTensor(synthetic::attention(run, s1, 0, 0, 4));
    EXPECT_EQ(first.pastExistingIds().runs, 0);  // a new file: nothing to move past
    first.close();
  }
  Writer writer(path, {.mode = OpenMode::Append, .keepIds = true});
  const IdShift shift = writer.pastExistingIds();
  EXPECT_EQ(shift.runs, 1);
  EXPECT_EQ(shift.steps, 2);
  EXPECT_EQ(shift.tensors, 1);
  // The stream as the engine numbers it.
  RunRecord run = synthetic::run("second");
  run.runId = 1;
  PromptRecord prompt = synthetic::prompt(1, 0);
  StepRecord step = synthetic::step(1, 0, 0);
  step.stepId = 1;
  TreeRecord tree = synthetic::tree(1, 3);
  StatisticRecord perStep = synthetic::statistic(1, 1, 0, 4);
  StatisticRecord runLevel = synthetic::statistic(1, 0, 0, 4);  // step 0: "none", stays 0
  TensorRecord tensor = synthetic::attention(1, 1, 0, 0, 4);
  tensor.info.tensorId = 1;
  shift.apply(run);
  shift.apply(prompt);
  shift.apply(step);
  shift.apply(tree);
  shift.apply(perStep);
  shift.apply(runLevel);
  shift.apply(tensor);
  EXPECT_EQ(writer.addRun(run), 2);
  writer.addPrompt(prompt);
  EXPECT_EQ(writer.addStep(step), 3);
  writer.addTree(tree);
  writer.addStatistic(perStep);
  writer.addStatistic(runLevel);
  EXPECT_EQ(writer.addTensor(tensor), 2);
  writer.close();

  Reader reader(path);
  ASSERT_EQ(reader.runs().size(), 2u);
  EXPECT_EQ(reader.stepCount(1), 2);  // the first evaluation is untouched
  EXPECT_EQ(reader.stepCount(2), 1);
  const BlockRecords block = reader.block(3);
  EXPECT_EQ(block.step.runId, 2);
  ASSERT_TRUE(block.tree);
  ASSERT_EQ(block.statistics.size(), 1u);
  ASSERT_EQ(block.tensors.size(), 1u);
  EXPECT_EQ(block.tensors[0].tensorId, 2);
  EXPECT_EQ(reader.statistics(2, 0).size(), 1u);
  EXPECT_EQ(reader.prompts(2).size(), 1u);
}

TEST(SessionVocabulary, UnknownEnumValuesNameTheColumn) {
  const std::string path = freshPath("bad_enum.dfi");
  {
    Writer writer(path, {.mode = OpenMode::Overwrite});
    writer.addRun(synthetic::run("r"));
  }
  execSql(path, "UPDATE runs SET mask_variant = 'sideways'");
  Reader reader(path);
  try {
    reader.runs();
    FAIL() << "an unknown mask variant was read";
  } catch (const dfi::FormatError& e) {
    EXPECT_EQ(e.context().item, "runs.mask_variant");
    EXPECT_NE(std::string(e.what()).find("sideways"), std::string::npos);
  }
}

}  // namespace
}  // namespace dfi::session
