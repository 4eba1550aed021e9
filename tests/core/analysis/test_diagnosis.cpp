// A diagnosis read back from a session written with the Writer: the plan from the baseline's
// settings, each hypothesis's paired tau difference against a hand computation, the ranking
// (measured by delta, then unmeasured, then not applicable), the block-size cap, the changed
// blocks, the grouping of runs under their baseline, and the JSON report.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "dfi/analysis/diagnosis.h"
#include "dfi/base/error.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "session_test_util.h"

using namespace dfi;
using namespace dfi::analysis;

namespace {

constexpr int kPrompts = 12, kSteps = 5, kBlock = 8;

// The baseline's accepted drafts at (prompt, step): varied, never above 7.
int baseAccepted(int prompt, int step) { return (prompt * 3 + step * 5) % 6; }

using Accepted = std::function<int(int prompt, int step)>;

session::RunId addRun(session::Writer& w, const std::string& drafter, const std::string& hypothesis, int blockSize,
                      const Accepted& accepted, const std::string& settings = "{}") {
  session::RunRecord run;
  run.name = drafter + "/diagnose/" + hypothesis;
  run.drafter.path = "/models/" + drafter;
  run.mode = session::EvaluationMode::TeacherForced;
  run.blockSize = blockSize;
  run.hypothesis = hypothesis;
  run.settingsJson = settings;
  const session::RunId id = w.addRun(run);
  for (int p = 0; p < kPrompts; ++p) {
    w.addPrompt({id, p, "set", 0, "prompt", {1, 2}, 40});
    for (int s = 0; s < kSteps; ++s) {
      session::StepRecord step;
      step.runId = id;
      step.promptId = p;
      step.stepIndex = s;
      step.mode = session::EvaluationMode::TeacherForced;
      step.anchorPosition = 100 + 7 * s;
      step.draftTokens.assign(static_cast<std::size_t>(blockSize - 1), 5);
      step.targetTokens.assign(static_cast<std::size_t>(blockSize - 1), 5);
      step.acceptedCount = std::min(accepted(p, s), blockSize - 1);
      w.addStep(step);
    }
  }
  return id;
}

DiagnosisPlan plan() {
  DiagnosisPlan p;
  p.lint = {{LintSeverity::Warning, "tap-is-last-layer", "d/config.json: dflash_config.target_layer_ids", "Tap earlier."}};
  p.battery = {{"up", "accepts two more"},
               {"down", "accepts one fewer"},
               {"block-size:4", "blocks of 4"},
               {"never-ran", "cancelled before it"},
               {"window:full", "full window", false, "the drafter has no sliding-window layers"}};
  return p;
}

class Diagnoses : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = session::testutil::freshPath("diagnosis.dfi");
    session::Writer w(path_, {.mode = session::OpenMode::Overwrite});
    addRun(w, "d", "baseline", kBlock, baseAccepted, withDiagnosisPlan(R"({"prompts": "p.jsonl"})", plan()));
    addRun(w, "d", "up", kBlock, [](int p, int s) { return baseAccepted(p, s) + 2; });
    addRun(w, "other", "up", kBlock, [](int, int) { return 0; });  // another drafter's: not this diagnosis's
    addRun(w, "d", "down", kBlock, [](int p, int s) { return std::max(0, baseAccepted(p, s) - 1); });
    // Blocks of 4: acceptance up to 3 drafts, one fewer than the (capped) baseline at step 0.
    addRun(w, "d", "block-size:4", 4, [](int p, int s) { return s == 0 ? std::max(0, baseAccepted(p, s) - 1) : 7; });
    // A second diagnosis of the same drafter: its runs are its own.
    DiagnosisPlan second;
    second.battery = {{"up", "accepts two more"}};
    addRun(w, "d", "baseline", kBlock, [](int, int) { return 1; }, withDiagnosisPlan("{}", second));
    addRun(w, "d", "up", kBlock, [](int, int) { return 1; });
    w.close();
  }

  static std::vector<Diagnosis> read() {
    session::Reader reader(path_);
    return readDiagnoses(reader.runs(), [&](session::RunId run, const auto& visit) { reader.forEachStepSummary(run, visit); },
                         {}, 500);
  }

  // mean over prompts of tau(hypothesis) - tau(baseline), both per prompt, lengths capped at `cap`.
  static double handDelta(const Accepted& hypothesis, int cap) {
    double sum = 0;
    for (int p = 0; p < kPrompts; ++p) {
      double h = 0, b = 0;
      for (int s = 0; s < kSteps; ++s) {
        h += std::min(hypothesis(p, s), cap - 1) + 1;
        b += std::min(std::min(baseAccepted(p, s), kBlock - 1) + 1, cap);
      }
      sum += (h - b) / kSteps;
    }
    return sum / kPrompts;
  }

  static inline std::string path_;
};

const HypothesisResult& named(const Diagnosis& d, const std::string& name) {
  return *std::ranges::find_if(d.hypotheses, [&](const HypothesisResult& h) { return h.planned.name == name; });
}

TEST_F(Diagnoses, PlanRoundTripsThroughTheSettings) {
  const std::string json = withDiagnosisPlan(R"({"prompts": "p.jsonl"})", plan());
  EXPECT_EQ(diagnosisPlan(json), plan());
  EXPECT_EQ(nlohmann::json::parse(json)["prompts"], "p.jsonl");  // the other settings stay
  EXPECT_EQ(diagnosisPlan(R"({"prompts": "p.jsonl"})"), std::nullopt);
  EXPECT_THROW(diagnosisPlan(R"({"diagnosis": {"lint": [{"severity": "dire"}], "battery": []}})"), FormatError);
}

TEST_F(Diagnoses, DeltasAgainstAHandComputationRankedBestFirst) {
  const std::vector<Diagnosis> all = read();
  ASSERT_EQ(all.size(), 2u);
  const Diagnosis& d = all[0];
  EXPECT_EQ(d.drafter, "d");
  EXPECT_EQ(d.lint, plan().lint);
  ASSERT_EQ(d.hypotheses.size(), 5u);

  const HypothesisResult& up = named(d, "up");
  EXPECT_NEAR(up.deltaTau.estimate, handDelta([](int p, int s) { return baseAccepted(p, s) + 2; }, kBlock + 1), 1e-12);
  EXPECT_GT(up.deltaTau.low, 0);
  EXPECT_TRUE(up.candidateCause());
  EXPECT_EQ(up.pairedPrompts, kPrompts);

  const HypothesisResult& down = named(d, "down");
  EXPECT_NEAR(down.deltaTau.estimate,
              handDelta([](int p, int s) { return std::max(0, baseAccepted(p, s) - 1); }, kBlock + 1), 1e-12);
  EXPECT_LT(down.deltaTau.high, 0);
  EXPECT_FALSE(down.candidateCause());

  // The baseline is capped at 4 too: only step 0 of each prompt, one draft shorter, differs.
  const HypothesisResult& block = named(d, "block-size:4");
  EXPECT_NEAR(block.deltaTau.estimate,
              handDelta([](int p, int s) { return s == 0 ? std::max(0, baseAccepted(p, s) - 1) : 7; }, 4), 1e-12);

  // Order: measured by delta, the unmeasured one, the one that does not apply.
  std::vector<std::string> order;
  for (const HypothesisResult& h : d.hypotheses) order.push_back(h.planned.name);
  EXPECT_EQ(order, (std::vector<std::string>{"up", "block-size:4", "down", "never-ran", "window:full"}));
  EXPECT_FALSE(named(d, "never-ran").measured());
  EXPECT_TRUE(named(d, "never-ran").planned.applicable);
  EXPECT_FALSE(named(d, "window:full").planned.applicable);

  // The second diagnosis sees only its own run.
  ASSERT_EQ(all[1].hypotheses.size(), 1u);
  EXPECT_NEAR(all[1].hypotheses[0].deltaTau.estimate, 0, 1e-12);
}

TEST_F(Diagnoses, ChangedBlocksPointAtBothRunsSteps) {
  const Diagnosis d = read()[0];
  const HypothesisResult& up = named(d, "up");
  EXPECT_TRUE(up.losses.empty());
  ASSERT_FALSE(up.gains.empty());
  EXPECT_LE(up.gains.size(), static_cast<std::size_t>(kDiagnosisBlocksKept));
  session::Reader reader(path_);
  for (const auto& b : up.gains) {
    const auto base = reader.step(b.stepA), hyp = reader.step(b.stepB);
    ASSERT_TRUE(base && hyp);
    EXPECT_EQ(base->runId, d.baseline);
    EXPECT_EQ(hyp->runId, up.run);
    EXPECT_EQ(base->anchorPosition, b.anchor);
    EXPECT_EQ(b.acceptA, base->acceptLength());
    EXPECT_EQ(b.acceptB, hyp->acceptLength());
    EXPECT_GT(b.acceptB, b.acceptA);
  }
  // Largest change first.
  EXPECT_GE(up.gains.front().acceptB - up.gains.front().acceptA, up.gains.back().acceptB - up.gains.back().acceptA);
  EXPECT_FALSE(named(d, "down").losses.empty());
}

TEST_F(Diagnoses, JsonListsEveryHypothesisSortedByDelta) {
  const auto json = nlohmann::json::parse(diagnosisJson(read()[0]));
  EXPECT_EQ(json["lint"][0]["code"], "tap-is-last-layer");
  EXPECT_EQ(json["lint"][0]["severity"], "warning");
  ASSERT_EQ(json["hypotheses"].size(), 5u);
  double previous = 1e9;
  for (const auto& h : json["hypotheses"]) {
    ASSERT_TRUE(h.contains("name") && h.contains("delta_tau") && h.contains("ci") && h.contains("applicable"));
    if (h["delta_tau"].is_null()) continue;
    EXPECT_LE(h["delta_tau"].get<double>(), previous);
    previous = h["delta_tau"].get<double>();
    ASSERT_EQ(h["ci"].size(), 2u);
    EXPECT_LE(h["ci"][0].get<double>(), h["delta_tau"].get<double>());
  }
  EXPECT_EQ(json["hypotheses"][4]["applicable"], false);
  EXPECT_EQ(json["hypotheses"][4]["reason"], "the drafter has no sliding-window layers");
}

}  // namespace

// An interval above zero over fewer prompts than a verdict needs names no cause: with 1-7
// prompts the percentile bootstrap is far narrower than the mean's spread.
TEST(HypothesisVerdict, NeedsTheMinimumNumberOfPrompts) {
  HypothesisResult h;
  h.run = 7;
  h.deltaTau = {0.5, 0.2, 0.8};
  h.pairedPrompts = kMinPromptsForVerdict - 1;
  EXPECT_FALSE(h.candidateCause());
  h.pairedPrompts = kMinPromptsForVerdict;
  EXPECT_TRUE(h.candidateCause());
  h.deltaTau = {0.5, -0.1, 0.8};
  EXPECT_FALSE(h.candidateCause());
}
