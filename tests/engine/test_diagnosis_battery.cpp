// The diagnosis battery on the bundled demo (its target and good drafter, two prompts): every
// hypothesis planned, the applicable ones measured at the baseline's anchors, and the drafter-side
// ones equal, block for block, to an independent evaluation of a drafter whose config says what
// the hypothesis assumes (taps moved, another mask, another block size) through the ordinary
// teacher-forced path. Cancelling and the budget keep what was measured.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <c10/core/InferenceMode.h>

#include "dfi/analysis/finding_words.h"
#include "dfi/analysis/response_sequence.h"
#include "dfi/base/error.h"
#include "dfi/engine/diagnosis.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "dfi/modelspec/drafter_config.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"
#include "evaluation/evaluation_models.h"

using namespace dfi;
using namespace dfi::engine;
namespace fs = std::filesystem;

namespace {

const fs::path kDemo = fs::path(DFI_SOURCE_DIR) / "resources/demo";

DiagnosisSettings settings() {
  DiagnosisSettings s;
  s.evaluation.target = kDemo / "target";
  s.evaluation.drafters = {kDemo / "drafter-good"};
  s.evaluation.prompts = kDemo / "prompts.jsonl";
  s.evaluation.limit = 2;
  s.evaluation.maxNewTokens = 24;
  s.tapNoiseScales = {0.2};
  return s;
}

fs::path freshSession(const std::string& name) {
  const fs::path path = fs::path(::testing::TempDir()) / ("dfi_diagnosis_" + std::to_string(::getpid()) + "_" + name);
  fs::remove(path);
  return path;
}

DiagnosisOutcome diagnoseInto(const fs::path& path, const DiagnosisSettings& s,
                              const std::function<void(const EvaluationProgress&)>& progress = {},
                              const CancellationToken& cancel = CancellationToken()) {
  session::Writer writer(path.string(), {.mode = session::OpenMode::Overwrite});
  SessionSink sink(writer);
  try {
    return runDiagnosis(s, sink, progress, cancel);
  } catch (...) {
    writer.close();
    throw;
  }
}

class DiagnosisBattery : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = freshSession("battery.dfi");
    outcome_ = diagnoseInto(path_, settings());
  }

  static std::map<std::string, session::RunRecord> runsByHypothesis() {
    std::map<std::string, session::RunRecord> out;
    for (const session::RunRecord& run : session::Reader(path_.string()).runs())
      out[run.hypothesis.empty() ? "live" : run.hypothesis] = run;
    return out;
  }

  static inline fs::path path_;
  static inline DiagnosisOutcome outcome_;
};

TEST_F(DiagnosisBattery, EveryApplicableHypothesisIsMeasuredAtTheBaselinesAnchors) {
  ASSERT_EQ(outcome_.baselines.size(), 1u);
  EXPECT_EQ(outcome_.prompts, 2);
  session::Reader reader(path_.string());
  const auto runs = runsByHypothesis();
  const auto plan = analysis::diagnosisPlan(runs.at("baseline").settingsJson);
  ASSERT_TRUE(plan);
  int applicable = 0;
  for (const analysis::PlannedHypothesis& h : plan->battery) {
    if (!h.applicable) {
      EXPECT_EQ(runs.count(h.name), 0u) << h.name;
      EXPECT_FALSE(h.reason.empty()) << h.name;
      continue;
    }
    ++applicable;
    ASSERT_EQ(runs.count(h.name), 1u) << h.name;
    for (session::PromptId p : {0, 1}) {
      const auto base = reader.steps(runs.at("baseline").runId, p);
      const auto hyp = reader.steps(runs.at(h.name).runId, p);
      ASSERT_EQ(hyp.size(), base.size()) << h.name;
      const bool formatting = h.name.starts_with("thinking:") || h.name == "chat-template:off";
      for (std::size_t i = 0; i < hyp.size(); ++i) {
        EXPECT_EQ(hyp[i].anchorToken, base[i].anchorToken) << h.name;
        if (!formatting) EXPECT_EQ(hyp[i].anchorPosition, base[i].anchorPosition) << h.name;
        else EXPECT_EQ(hyp[i].anchorPosition - base[i].anchorPosition, hyp[0].anchorPosition - base[0].anchorPosition);
      }
    }
  }
  // The demo's drafter has no sliding layers; the demo's target has Gated DeltaNet layers.
  const auto window = std::ranges::find(plan->battery, std::string("window:full"), &analysis::PlannedHypothesis::name);
  ASSERT_NE(window, plan->battery.end());
  EXPECT_FALSE(window->applicable);
  EXPECT_EQ(runs.count("gdn:chunked"), 1u);
  EXPECT_GE(applicable, 20);
  // The baseline drafts where the live loop verified.
  for (session::PromptId p : {0, 1}) {
    const auto live = reader.steps(runs.at("live").runId, p), base = reader.steps(runs.at("baseline").runId, p);
    ASSERT_EQ(live.size(), base.size());
    for (std::size_t i = 0; i < live.size(); ++i) EXPECT_EQ(live[i].anchorPosition, base[i].anchorPosition);
  }
}

// What a drafter whose config names `taps` (or `blockSize`) drafts at the baseline's anchors,
// through loadDrafterAs and the ordinary teacher-forced path.
// Every hypothesis the battery plans has plain words (what it means, what to do) for the
// report's and the panel's top finding, and they name what they are about.
TEST_F(DiagnosisBattery, EveryPlannedHypothesisHasPlainWords) {
  const auto plan = analysis::diagnosisPlan(runsByHypothesis().at("baseline").settingsJson);
  ASSERT_TRUE(plan);
  for (const analysis::PlannedHypothesis& h : plan->battery) {
    const auto words = analysis::findingWords(h);
    ASSERT_TRUE(words) << h.name << " has no plain words";
    EXPECT_FALSE(words->meaning.empty()) << h.name;
    EXPECT_FALSE(words->action.empty()) << h.name;
  }
  const auto shifted = analysis::findingWords({.name = "taps-shift:-1"});
  EXPECT_NE(shifted->meaning.find("hidden_states[id] instead of hidden_states[id + 1]"), std::string::npos);
  EXPECT_NE(shifted->action.find("one lower"), std::string::npos);
  const auto oneTap = analysis::findingWords({.name = "tap-shift:2:+1"});
  EXPECT_NE(oneTap->meaning.find("one layer later than its config names for tap 2"), std::string::npos) << oneTap->meaning;
  EXPECT_NE(analysis::findingWords({.name = "mask:anchor-visible"})->meaning.find("anchor visible"), std::string::npos);
  EXPECT_FALSE(analysis::findingWords({.name = "no-such:thing"}));
}

TEST_F(DiagnosisBattery, DrafterSideHypothesesEqualAnIndependentlyConfiguredDrafter) {
  c10::InferenceMode inference;
  const auto target = TargetModel::load(kDemo / "target", {});
  const fs::path dir = kDemo / "drafter-good";
  auto configWith = [&](const std::vector<int>& taps) {
    auto c = modelspec::parseDrafterConfig(dir / "config.json", target->config().numHiddenLayers);
    c.targetLayerIds = taps;
    return c;
  };
  const auto good = loadDrafter(dir, *target);
  struct Case {
    std::string name;
    std::unique_ptr<DFlashDrafter> drafter;
    analysis::MaskVariant variant = analysis::MaskVariant::Reference;
  };
  std::vector<Case> cases;
  cases.push_back({"taps-shift:+1", loadDrafterAs(dir, *target, configWith({2, 4, 5}))});
  cases.push_back({"taps-shift:-1", loadDrafterAs(dir, *target, configWith({0, 2, 3}))});
  cases.push_back({"tap-shift:0:-1", loadDrafterAs(dir, *target, configWith({0, 3, 4}))});
  cases.push_back({"block-size:8", loadDrafter(dir, *target, 8)});
  cases.push_back({"mask:anchor-visible", loadDrafter(dir, *target), analysis::MaskVariant::AnchorVisible});
  cases.push_back({"positions:+1", loadDrafter(dir, *target), analysis::MaskVariant::PositionsPlusOne});

  session::Reader reader(path_.string());
  const auto runs = runsByHypothesis();
  const auto prompts = reader.prompts(runs.at("live").runId);
  for (const session::PromptRecord& prompt : prompts) {
    const auto live = reader.steps(runs.at("live").runId, prompt.promptId);
    const auto rebuilt = analysis::ResponseSequence::build(prompt.promptTokens, live);
    std::vector<std::int64_t> sequence;
    for (const auto& t : rebuilt.tokens) sequence.push_back(t.id);
    sequence.resize(prompt.promptTokens.size() + static_cast<std::size_t>(prompt.completionTokens));
    std::vector<std::int64_t> anchors;
    for (const auto& s : live) anchors.push_back(s.anchorPosition);
    for (const Case& c : cases) {
      const auto expected = teacherForcedSteps(*target, *c.drafter, sequence, anchors, c.variant, 8);
      const auto recorded = reader.steps(runs.at(c.name).runId, prompt.promptId);
      ASSERT_EQ(recorded.size(), expected.size()) << c.name;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        // A hypothesis keeps its drafts through the first rejected slot, and no top-k.
        std::vector<session::TokenId> through = expected[i].draftTokens;
        const auto computed = std::min<std::size_t>(through.size(), static_cast<std::size_t>(expected[i].acceptedCount) + 1);
        std::fill(through.begin() + static_cast<std::ptrdiff_t>(computed), through.end(), session::TokenId{-1});
        EXPECT_EQ(recorded[i].draftTokens, through) << c.name << " step " << i;
        EXPECT_EQ(recorded[i].targetTokens, expected[i].targetTokens) << c.name << " step " << i;
        EXPECT_EQ(recorded[i].acceptedCount, expected[i].acceptedCount) << c.name << " step " << i;
        EXPECT_EQ(recorded[i].bonusToken, expected[i].bonusToken) << c.name << " step " << i;
        EXPECT_TRUE(recorded[i].topKIds.empty()) << c.name << " step " << i;
      }
    }
    // The baseline itself is the ordinary teacher-forced pass.
    const auto expected = teacherForcedSteps(*target, *good, sequence, anchors, analysis::MaskVariant::Reference, 8);
    const auto recorded = reader.steps(runs.at("baseline").runId, prompt.promptId);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(recorded[i].draftTokens, expected[i].draftTokens);
      EXPECT_EQ(recorded[i].topKIds, expected[i].topKIds);
    }
  }
}

TEST_F(DiagnosisBattery, AblationAndNoiseChangeTheDraftsDeterministically) {
  const fs::path again = freshSession("again.dfi");
  diagnoseInto(again, settings());
  session::Reader first(path_.string()), second(again.string());
  const auto runs = runsByHypothesis();
  std::map<std::string, session::RunId> secondRuns;
  for (const auto& run : second.runs()) secondRuns[run.hypothesis] = run.runId;
  for (const std::string name : {"tap-ablate:0", "tap-noise:0.2", "slot0:mask"}) {
    int differing = 0;
    for (session::PromptId p : {0, 1}) {
      const auto a = first.steps(runs.at(name).runId, p), b = second.steps(secondRuns.at(name), p);
      const auto base = first.steps(runs.at("baseline").runId, p);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].draftTokens, b[i].draftTokens) << name;  // the same seed, the same noise
        // The slots the hypothesis drafted (through its first rejection) against the baseline's.
        const auto drafted = static_cast<std::ptrdiff_t>(std::ranges::find(a[i].draftTokens, -1) - a[i].draftTokens.begin());
        ASSERT_GT(drafted, 0);
        differing += !std::equal(a[i].draftTokens.begin(), a[i].draftTokens.begin() + drafted, base[i].draftTokens.begin());
      }
    }
    EXPECT_GT(differing, 0) << name << " drafted exactly as the baseline";
  }
}

TEST(DiagnosisCancel, KeepsWhatWasMeasuredPairedOverThePromptsReached) {
  const fs::path path = freshSession("cancel.dfi");
  CancellationToken cancel;
  // Cancelled at the first prompt's progress (the loading's stages come before, with nothing done).
  EXPECT_THROW(diagnoseInto(path, settings(), [&](const EvaluationProgress& p) { if (p.done > 0) cancel.cancel(); },
                            cancel),
               CancelledError);
  session::Reader reader(path.string());
  const auto diagnoses = analysis::readDiagnoses(
      reader.runs(), [&](session::RunId run, const auto& visit) { reader.forEachStepSummary(run, visit); }, {}, 200);
  ASSERT_EQ(diagnoses.size(), 1u);
  int measured = 0;
  for (const auto& h : diagnoses[0].hypotheses) {
    if (!h.measured()) continue;  // not applicable, or a target-side one the cancel came before
    ++measured;
    EXPECT_EQ(h.pairedPrompts, 1) << h.planned.name;
  }
  EXPECT_GE(measured, 15);
}

TEST(DiagnosisBudget, StopsTakingPromptsAndMeasuresEveryHypothesisOnTheSameOnes) {
  DiagnosisSettings s = settings();
  s.budgetMinutes = 1e-6;
  const fs::path path = freshSession("budget.dfi");
  const DiagnosisOutcome outcome = diagnoseInto(path, s);
  EXPECT_TRUE(outcome.budgetReached);
  EXPECT_EQ(outcome.prompts, 1);
  session::Reader reader(path.string());
  for (const auto& run : reader.runs()) EXPECT_EQ(reader.prompts(run.runId).size(), 1u) << run.name;
}

TEST(DiagnosisLint, NamesTheFileAndFieldOfEachFinding) {
  const auto lint = lintDrafter(settings(), kDemo / "drafter-good");
  // The demo drafter taps layers 1, 3, 4 of 6 and uses a padded row as its mask token: only the
  // prompt format is worth saying.
  ASSERT_FALSE(lint.empty());
  for (const auto& f : lint) EXPECT_NE(f.severity, analysis::LintSeverity::Error) << f.code << ": " << f.message;
  EXPECT_TRUE(std::ranges::any_of(lint, [](const auto& f) { return f.code == "prompt-format"; }));
  EXPECT_FALSE(std::ranges::any_of(lint, [](const auto& f) { return f.code == "tap-is-last-layer"; }));
}

}  // namespace
