// End-to-end evaluation on a tiny random Qwen3 target and DFlash drafter (the drafter oracle's
// "live" fixture, written by transformers): every mode and two mask variants into a session,
// then the session is read back and checked against the published definitions.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/engine/evaluation.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"

namespace fs = std::filesystem;
using namespace dfi;
namespace s = dfi::session;

namespace {

const fs::path kLiveDir = fs::path(DFI_BINARY_DIR) / "tests/oracle/drafter/live";

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("dfi_eval_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path writePrompts(const fs::path& dir) {
  const fs::path file = dir / "prompts.jsonl";
  std::ofstream out(file);
  out << "# token ids below the mask id (15) of the fixture's vocabulary of 16\n"
      << R"({"id": 10, "dataset": "fixture", "ids": [1, 4, 2, 7, 3]})" << "\n"
      << R"({"id": 11, "ids": [9, 9, 0, 5]})" << "\n"
      << "\n"
      << R"({"id": 12, "ids": [6, 2, 8, 1, 1, 4, 12]})" << "\n";
  return file;
}

engine::EvaluationSettings settingsFor(const fs::path& dir) {
  engine::EvaluationSettings settings;
  settings.target = kLiveDir / "target";
  settings.drafters = {kLiveDir / "drafter"};
  settings.prompts = writePrompts(dir);
  settings.maskVariants = {analysis::MaskVariant::Reference, analysis::MaskVariant::AnchorVisible};
  settings.maxNewTokens = 24;
  settings.topK = 4;
  settings.ddtreeBudget = 6;
  settings.chatTemplate = false;
  settings.hiddenStatistics = true;
  return settings;
}

std::vector<s::StepRecord> stepsOf(s::Reader& reader, s::RunId run) {
  std::vector<s::StepRecord> steps;
  reader.forEachStep(run, [&](const s::StepRecord& step) { steps.push_back(step); });
  return steps;
}

}  // namespace

class Evaluation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = scratch("all_modes");
    session = dir / "run.dfi";
    s::Writer writer(session.string());
    engine::SessionSink sink(writer);
    CancellationToken cancel;
    summaries = engine::runEvaluation(settingsFor(dir), sink, [&](const auto& p) { progress.push_back(p); }, cancel);
    writer.close();
  }
  static inline fs::path dir, session;
  static inline std::vector<engine::EvaluatedRun> summaries;
  static inline std::vector<engine::EvaluationProgress> progress;

  s::RunId runNamed(const std::string& suffix) {
    for (const auto& r : summaries)
      if (r.name.ends_with(suffix)) return r.runId;
    ADD_FAILURE() << "no run " << suffix;
    return 0;
  }
};

TEST_F(Evaluation, RecordsOneRunPerModeAndVariant) {
  // live (reference only), teacher-forced x 2 variants, ddtree x 2 variants
  ASSERT_EQ(summaries.size(), 5u);
  s::Reader reader(session.string());
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 5u);
  for (const auto& run : runs) {
    EXPECT_EQ(reader.prompts(run.runId).size(), 3u) << run.name;
    EXPECT_GT(run.finishedAt, run.startedAt) << run.name;
    EXPECT_EQ(run.blockSize, 4);
    EXPECT_EQ(run.topK, 6) << "top-k is raised to the DDTree budget";
    EXPECT_FALSE(run.target.weightsSha256.empty());
    EXPECT_EQ(nlohmann::json::parse(run.settingsJson)["max_new_tokens"], 24);
  }
  // The loading's stages first (nothing done, the total known), then one frame per prompt.
  const auto loading = std::ranges::count_if(progress, [](const auto& p) { return p.done == 0; });
  ASSERT_EQ(loading, 3);
  EXPECT_EQ(progress.front().total, 3);
  EXPECT_NE(progress[1].current.find("loading the target"), std::string::npos) << progress[1].current;
  ASSERT_EQ(progress.size(), 6u);
  EXPECT_EQ(progress.back().done, 3);
  EXPECT_EQ(progress.back().total, 3);
}

// The heart of the parity check: at the anchors the live loop visited, teacher-forced
// drafting with the reference mask drafts and accepts exactly what the live loop did, where
// the live loop drafted a whole block (dflash's counting shortens the last one to the budget).
TEST_F(Evaluation, TeacherForcedReferenceEqualsLiveAtLiveAnchors) {
  s::Reader reader(session.string());
  const auto live = stepsOf(reader, runNamed("/live/reference"));
  const auto tf = stepsOf(reader, runNamed("/teacher-forced/reference"));
  ASSERT_EQ(live.size(), tf.size());
  ASSERT_FALSE(live.empty());
  std::size_t shortened = 0;
  for (std::size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(tf[i].promptId, live[i].promptId);
    EXPECT_EQ(tf[i].anchorPosition, live[i].anchorPosition);
    if (live[i].draftTokens.size() < tf[i].draftTokens.size()) {
      ++shortened;
      continue;
    }
    EXPECT_EQ(tf[i].draftTokens, live[i].draftTokens) << "step " << i;
    EXPECT_EQ(tf[i].acceptedCount, live[i].acceptedCount) << "step " << i;
  }
  EXPECT_LT(shortened, live.size() / 2) << "most blocks are whole";
}

// tau(reference) as the z-lab benchmark defines it, recomputed from the stored steps, against the
// summary rows the run prints and serve sends (engine::summaryRuns -> analysis::summarizeRuns).
TEST_F(Evaluation, SummaryTauIsTheMeanOfPerResponseMeans) {
  s::Reader reader(session.string());
  const auto rows = dfi::analysis::summarizeRuns(engine::summaryRuns(settingsFor(dir), summaries));
  // Two prompt sets ("fixture", and the file's name for prompts without one), greedy: per run a
  // row of each and one of all its prompts.
  ASSERT_EQ(rows.size(), 3 * summaries.size());
  for (const auto& summary : summaries) {
    std::map<s::PromptId, std::vector<int>> perPrompt;
    for (const auto& step : stepsOf(reader, summary.runId)) perPrompt[step.promptId].push_back(step.acceptLength());
    double sum = 0;
    for (const auto& [prompt, lengths] : perPrompt)
      sum += std::accumulate(lengths.begin(), lengths.end(), 0.0) / lengths.size();
    const auto row = std::ranges::find_if(
        rows, [&](const auto& r) { return r.runIds == std::vector{summary.runId} && r.dataset == "all"; });
    ASSERT_NE(row, rows.end()) << summary.name;
    EXPECT_NEAR(row->tau.estimate, sum / perPrompt.size(), 1e-12) << summary.name;
    EXPECT_EQ(summary.steps, static_cast<std::int64_t>(stepsOf(reader, summary.runId).size()));
    EXPECT_EQ(row->steps, summary.steps);
  }
}

TEST_F(Evaluation, StepsCarryTopKGarbleFlagsAndTokenStrings) {
  s::Reader reader(session.string());
  for (const auto& step : stepsOf(reader, runNamed("/live/reference"))) {
    ASSERT_EQ(step.topKIds.size(), step.draftTokens.size() * 6);
    for (std::size_t slot = 0; slot < step.draftTokens.size(); ++slot) {
      EXPECT_EQ(step.topKIds[slot * 6], step.draftTokens[slot]) << "greedy draft is the top-1";
      for (int r = 1; r < 6; ++r) EXPECT_GE(step.topKProbs[slot * 6 + r - 1], step.topKProbs[slot * 6 + r]);
    }
    EXPECT_EQ(step.garbleFlags.size(), step.draftTokens.size());
    EXPECT_TRUE(reader.tokenString(step.anchorToken).has_value());
  }
}

// DDTree's accepted path follows the target's greedy tokens, root included, and its length is
// the step's acceptance length.
TEST_F(Evaluation, DDTreeStepsMatchTheirTrees) {
  s::Reader reader(session.string());
  const auto steps = stepsOf(reader, runNamed("/ddtree/reference"));
  ASSERT_FALSE(steps.empty());
  for (const auto& step : steps) {
    const auto tree = reader.tree(step.stepId);
    ASSERT_TRUE(tree.has_value());
    EXPECT_EQ(tree->nodeTokens.size(), 7u);  // root + budget 6
    ASSERT_EQ(static_cast<int>(tree->acceptedPath.size()), step.acceptLength());
    for (std::size_t d = 1; d < tree->acceptedPath.size(); ++d) {
      const auto node = static_cast<std::size_t>(tree->acceptedPath[d]);
      EXPECT_EQ(tree->parents[node], tree->acceptedPath[d - 1]);
      EXPECT_EQ(tree->nodeTokens[node], step.targetTokens[d - 1]);
    }
    // The bonus is the target's token after the path; past the recorded slots (a path through
    // non-top-1 candidates down to the last slot) it is unknown unless the chain got there too.
    const auto accepted = static_cast<std::size_t>(step.acceptedCount);
    if (accepted < step.targetTokens.size())
      EXPECT_EQ(step.bonusToken, step.targetTokens[accepted]);
    else
      EXPECT_GE(step.bonusToken, -1);
  }
}

TEST_F(Evaluation, EveryTeacherForcedBlockPassesTheParityCheck) {
  // Same mask on both paths: the batched training forward and the incremental inference one
  // are one computation, so nothing is flagged and every recorded difference is rounding.
  s::Reader reader(session.string());
  for (const auto& summary : summaries) {
    if (summary.mode != engine::EvaluationMode::TeacherForced) continue;
    EXPECT_EQ(summary.parityFlagged, 0) << summary.name;
    for (const auto& step : stepsOf(reader, summary.runId)) {
      std::map<std::string, float> parity;
      for (const auto& st : reader.statistics(summary.runId, step.stepId))
        if (st.name.starts_with("parity.")) parity[st.name] = st.values.at(0);
      ASSERT_EQ(parity.size(), 3u) << summary.name << " step " << step.stepId;
      EXPECT_LE(parity["parity.max_abs_diff"], 1e-4);
      EXPECT_EQ(parity["parity.argmax_agreement"], 1.0f);
      EXPECT_EQ(parity["parity.first_differing_slot"], -1.0f);
    }
  }
}

TEST_F(Evaluation, HiddenStatisticsCoverEveryPositionOnceAndEveryBlock) {
  s::Reader reader(session.string());
  const s::RunId run = runNamed("/teacher-forced/reference");
  const auto steps = stepsOf(reader, run);
  std::map<std::pair<std::string, int>, std::size_t> positions;  // (statistic, layer) -> rows seen
  std::map<s::PromptId, std::int64_t> lastAnchor;
  for (const auto& step : steps) {
    lastAnchor[step.promptId] = std::max(lastAnchor[step.promptId], step.anchorPosition);
    for (const auto& st : reader.statistics(run, step.stepId)) {
      if (st.name.ends_with(".mean")) positions[{st.name, st.layer}] += st.values.size();
      if (st.name == "drafter.layer.mean") {
        EXPECT_EQ(st.values.size(), 4u) << "one value per block slot";
      }
      if (st.name.ends_with(".nan") || st.name.ends_with(".inf")) {
        for (float v : st.values) EXPECT_EQ(v, 0.0f) << st.name;
      }
      if (st.name.ends_with(".histogram")) {
        EXPECT_EQ(st.values.size(), 64u);
      }
    }
  }
  // Context rows: each position before a prompt's last anchor is counted at exactly one step.
  std::size_t contextRows = 0;
  for (const auto& [prompt, anchor] : lastAnchor) contextRows += static_cast<std::size_t>(anchor);
  for (const char* name : {"target.tap.mean", "drafter.fc.mean", "drafter.hidden_norm.mean"}) {
    bool found = false;
    for (const auto& [key, rows] : positions)
      if (key.first == name) {
        found = true;
        EXPECT_EQ(rows, contextRows) << name << " layer " << key.second;
      }
    EXPECT_TRUE(found) << name;
  }
  EXPECT_EQ((positions[{"drafter.layer.mean", 0}]), steps.size() * 4);
}

TEST_F(Evaluation, VariantStepsAreLabelled) {
  s::Reader reader(session.string());
  for (const auto& step : stepsOf(reader, runNamed("/teacher-forced/anchor-visible")))
    EXPECT_EQ(step.maskVariant, "anchor-visible");
}

TEST(EvaluationErrors, MismatchedDrafterIsRefusedBeforeAnyCompute) {
  const fs::path dir = scratch("mismatch");
  fs::copy(kLiveDir / "drafter", dir / "bad_drafter");
  auto config = nlohmann::json::parse(std::ifstream(dir / "bad_drafter/config.json"));
  config["dflash_config"]["target_layer_ids"] = {1, 9};  // the target has 4 layers
  std::ofstream(dir / "bad_drafter/config.json") << config.dump();
  auto settings = settingsFor(dir);
  settings.drafters = {kLiveDir / "drafter", dir / "bad_drafter"};
  s::Writer writer((dir / "run.dfi").string());
  engine::SessionSink sink(writer);
  try {
    engine::runEvaluation(settings, sink, {}, CancellationToken{});
    FAIL() << "expected a ValidationError";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("target_layer_ids"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad_drafter"), std::string::npos) << e.what();
  }
  writer.close();
  EXPECT_TRUE(s::Reader((dir / "run.dfi").string()).runs().empty());
}

TEST(EvaluationErrors, CancellingKeepsAValidSession) {
  const fs::path dir = scratch("cancel");
  s::Writer writer((dir / "run.dfi").string());
  engine::SessionSink sink(writer);
  CancellationToken cancel;
  auto settings = settingsFor(dir);
  // Cancel once the first prompt is done: its steps stay, the rest never starts.
  EXPECT_THROW(engine::runEvaluation(
                   settings, sink, [&](const auto& p) { if (p.done > 0) cancel.cancel(); }, cancel),
               CancelledError);
  writer.close();
  s::Reader reader((dir / "run.dfi").string());
  ASSERT_EQ(reader.runs().size(), 5u);
  EXPECT_GT(reader.stepCount(reader.runs().front().runId), 0);
  EXPECT_EQ(reader.prompts(reader.runs().front().runId).size(), 1u);
}

TEST(PromptSet, MalformedLinesNameFileLineAndField) {
  const fs::path dir = scratch("prompts");
  auto expectError = [&](const std::string& line, const std::string& field) {
    std::ofstream(dir / "p.jsonl") << R"({"prompt": "ok"})" << "\n" << line << "\n";
    try {
      engine::loadPromptSet(dir / "p.jsonl");
      ADD_FAILURE() << "accepted: " << line;
    } catch (const Error& e) {
      EXPECT_EQ(e.context().file, (dir / "p.jsonl").string());
      EXPECT_NE(e.context().item.find("line 2"), std::string::npos) << e.what();
      EXPECT_NE(e.context().item.find(field), std::string::npos) << e.what();
    }
  };
  expectError("{not json", "line 2");
  expectError(R"({"ids": [1, -2]})", "ids");
  expectError(R"({"prompt": "a", "ids": [1]})", "prompt");
  expectError(R"({"messages": [{"role": "user"}]})", "messages[0]");
  expectError(R"({"id": 0, "prompt": "dup"})", "id");
  expectError(R"({"ids": [1e999]})", "line 2");  // nlohmann's out_of_range, not parse_error
  const auto shard = engine::shardOf(engine::loadPromptSet(writePrompts(dir)), 1, 2);
  ASSERT_EQ(shard.size(), 1u);
  EXPECT_EQ(shard[0].id, 11);
  EXPECT_THROW(engine::shardOf({}, 2, 2), UsageError);
}
