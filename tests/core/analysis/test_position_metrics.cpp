// Acceptance by position (position_metrics.h) on a hand-built session whose figures are worked
// out by hand below: slot acceptance, tau per anchor-position bin, the reliability bins and
// the ECE, per step mode; and the same figures in `export --what positions` and the summary's
// text section.

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dfi/analysis/position_metrics.h"
#include "dfi/analysis/position_report.h"
#include "dfi/session/reader.h"
#include "session_test_util.h"

using namespace dfi::session;
using namespace dfi::analysis;

namespace {

// B = 4 (three draft slots), k = 2. Each step: mode, prompt, anchor position, accepted count,
// drafts, targets, and per slot the top-k (ids, probabilities).
StepRecord step(EvaluationMode mode, PromptId prompt, std::int64_t anchor, int accepted, std::vector<TokenId> drafts,
                std::vector<TokenId> targets, std::vector<TokenId> ids, std::vector<float> probs) {
  StepRecord s;
  s.mode = mode;
  s.promptId = prompt;
  s.anchorPosition = anchor;
  s.acceptedCount = accepted;
  s.draftTokens = std::move(drafts);
  s.targetTokens = std::move(targets);
  s.topKIds = std::move(ids);
  s.topKProbs = std::move(probs);
  return s;
}

constexpr auto TF = EvaluationMode::TeacherForced;
constexpr auto Live = EvaluationMode::Live;

std::vector<StepRecord> handSteps() {
  return {
      // Teacher-forced: every slot scored, accepted = draft == target whatever came before.
      // S1: slot 0 p .92 yes, slot 1 p .35 no, slot 2 p .75 yes (after a mismatch: still counted).
      step(TF, 0, 10, 1, {5, 6, 7}, {5, 9, 7}, {5, 8, 6, 5, 7, 1}, {.92f, .05f, .35f, .30f, .75f, .10f}),
      // S2: .95 yes, .45 yes, .72 yes.
      step(TF, 0, 70, 3, {5, 6, 7}, {5, 6, 7}, {5, 8, 6, 5, 7, 1}, {.95f, .01f, .45f, .30f, .72f, .10f}),
      // S3: .15 no; slot 1's draft (2) is not in its top-k: unscored; .78 yes.
      step(TF, 1, 200, 0, {1, 2, 3}, {4, 2, 3}, {1, 4, 9, 8, 3, 2}, {.15f, .10f, .50f, .20f, .78f, .10f}),
      // S4: .65 yes, .55 yes, .25 no.
      step(TF, 1, 20, 2, {1, 2, 3}, {1, 2, 4}, {1, 4, 2, 8, 3, 4}, {.65f, .10f, .55f, .20f, .25f, .20f}),
      // Live: the reached slots only. L1: .85 yes, .42 no (first mismatch); slot 2 equals its
      // target token but lies past the mismatch: not scored.
      step(Live, 0, 5, 1, {5, 6, 7}, {5, 9, 7}, {5, 8, 6, 9, 7, 1}, {.85f, .05f, .42f, .40f, .60f, .10f}),
      // L2: all three accepted: .99, .65, .55.
      step(Live, 1, 300, 3, {5, 6, 7}, {5, 6, 7}, {5, 8, 6, 9, 7, 1}, {.99f, .01f, .65f, .30f, .55f, .20f}),
  };
}

std::string writeHandSession(int topK) {
  const std::string path = testutil::freshPath("positions_" + std::to_string(topK) + ".dfi");
  Writer writer(path, {.mode = OpenMode::Overwrite});
  RunRecord run;
  run.name = "hand";
  run.blockSize = 4;
  run.topK = topK;
  const RunId id = writer.addRun(run);
  writer.addPrompt({id, 0, "", 0, "", {1, 2}, 0});
  writer.addPrompt({id, 1, "", 0, "", {1, 2}, 0});
  std::map<PromptId, std::int32_t> nextIndex;
  for (StepRecord s : handSteps()) {
    s.runId = id;
    s.stepIndex = nextIndex[s.promptId]++;
    if (topK == 0) s.topKIds.clear(), s.topKProbs.clear();
    writer.addStep(s);
  }
  writer.close();
  return path;
}

const PositionMetrics& ofMode(const std::vector<PositionMetrics>& all, EvaluationMode mode) {
  for (const PositionMetrics& m : all)
    if (m.mode == mode) return m;
  throw std::runtime_error("no metrics for the mode");
}

}  // namespace

TEST(PositionMetrics, AnchorBinsArePowersOfTwoAfterTheFirst32) {
  EXPECT_EQ(anchorBinOf(0), 0);
  EXPECT_EQ(anchorBinOf(31), 0);
  EXPECT_EQ(anchorBinOf(32), 1);
  EXPECT_EQ(anchorBinOf(63), 1);
  EXPECT_EQ(anchorBinOf(64), 2);
  EXPECT_EQ(anchorBinOf(127), 2);
  EXPECT_EQ(anchorBinOf(128), 3);
  EXPECT_EQ(anchorBinOf(256), 4);
  EXPECT_EQ(anchorBinOf(32767), 10);
  EXPECT_EQ(anchorBinOf(32768), 11);
  using Range = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(anchorBinRange(0), Range(0, 32));
  EXPECT_EQ(anchorBinRange(4), Range(256, 512));
  for (std::int64_t p : {0, 5, 63, 64, 100, 1000, 4096, 100000}) {
    const auto [begin, end] = anchorBinRange(anchorBinOf(p));
    EXPECT_LE(begin, p);
    EXPECT_LT(p, end);
  }
}

TEST(PositionMetrics, TeacherForcedFiguresMatchTheHandComputation) {
  Reader reader(writeHandSession(2));
  const auto all = computePositionMetrics(reader, reader.runs().at(0));
  ASSERT_EQ(all.size(), 2u);
  const PositionMetrics& m = ofMode(all, TF);
  EXPECT_EQ(m.steps, 4);
  EXPECT_EQ(m.blockSize, 4);
  // Lengths 2, 4, 1, 3: slot 1 accepted in 3 of 4 steps, slot 2 in 2 (lengths >= 3), slot 3 in 1.
  ASSERT_EQ(m.slotAcceptance.size(), 3u);
  EXPECT_DOUBLE_EQ(m.slotAcceptance[0], 0.75);
  EXPECT_DOUBLE_EQ(m.slotAcceptance[1], 0.50);
  EXPECT_DOUBLE_EQ(m.slotAcceptance[2], 0.25);
  // vLLM's definition: 1 + the sum of the per-position rates is its mean acceptance length.
  EXPECT_DOUBLE_EQ(1 + m.slotAcceptance[0] + m.slotAcceptance[1] + m.slotAcceptance[2], (2 + 4 + 1 + 3) / 4.0);

  // Anchors 10 and 20 (prompts 0 and 1, lengths 2 and 3), 70 (length 4), 200 (length 1).
  ASSERT_EQ(m.anchorBins.size(), 3u);
  EXPECT_EQ(m.anchorBins[0].begin, 0);
  EXPECT_EQ(m.anchorBins[0].end, 32);
  EXPECT_EQ(m.anchorBins[0].steps, 2);
  EXPECT_EQ(m.anchorBins[0].prompts, 2);
  EXPECT_DOUBLE_EQ(m.anchorBins[0].meanLength.estimate, 2.5);
  // Resampling two prompts of one step each gives 2, 2.5 or 3.
  EXPECT_GE(m.anchorBins[0].meanLength.low, 2.0);
  EXPECT_LE(m.anchorBins[0].meanLength.high, 3.0);
  EXPECT_LT(m.anchorBins[0].meanLength.low, m.anchorBins[0].meanLength.high);
  EXPECT_EQ(m.anchorBins[1].begin, 64);
  EXPECT_DOUBLE_EQ(m.anchorBins[1].meanLength.estimate, 4.0);
  EXPECT_DOUBLE_EQ(m.anchorBins[1].meanLength.low, 4.0);  // one prompt: no spread
  EXPECT_EQ(m.anchorBins[2].begin, 128);
  EXPECT_EQ(m.anchorBins[2].end, 256);
  EXPECT_DOUBLE_EQ(m.anchorBins[2].meanLength.estimate, 1.0);

  // Scored: .92 y .35 n .75 y | .95 y .45 y .72 y | .15 n (one unscored) .78 y | .65 y .55 y .25 n.
  const Calibration& c = m.calibration;
  EXPECT_EQ(c.scoredSlots, 11);
  EXPECT_EQ(c.unscoredSlots, 1);
  ASSERT_EQ(c.bins.size(), 10u);
  const std::vector<std::int64_t> counts{0, 1, 1, 1, 1, 1, 1, 3, 0, 2};
  const std::vector<double> accepted{0, 0, 0, 0, 1, 1, 1, 1, 0, 1};
  const std::vector<double> predicted{0, .15, .25, .35, .45, .55, .65, (.75 + .72 + .78) / 3, 0, (.92 + .95) / 2};
  for (std::size_t b = 0; b < 10; ++b) {
    EXPECT_EQ(c.bins[b].count, counts[b]) << "bin " << b;
    EXPECT_DOUBLE_EQ(c.bins[b].acceptedFraction, accepted[b]) << "bin " << b;
    EXPECT_NEAR(c.bins[b].meanProbability, predicted[b], 1e-6) << "bin " << b;
    EXPECT_DOUBLE_EQ(c.bins[b].begin, b / 10.0);
  }
  // ECE = (.15 + .25 + .35 + .55 + .45 + .35 + 3 * .25 + 2 * .065) / 11
  EXPECT_NEAR(c.expectedCalibrationError, 2.98 / 11, 1e-6);
  EXPECT_NEAR(c.meanProbability, 6.52 / 11, 1e-6);
  EXPECT_DOUBLE_EQ(c.acceptedFraction, 8.0 / 11);
}

TEST(PositionMetrics, LiveStepsScoreOnlyTheSlotsTheVerifierReached) {
  Reader reader(writeHandSession(2));
  const auto all = computePositionMetrics(reader, reader.runs().at(0));
  const PositionMetrics& m = ofMode(all, Live);
  EXPECT_EQ(m.steps, 2);
  ASSERT_EQ(m.slotAcceptance.size(), 3u);  // lengths 2 and 4
  EXPECT_DOUBLE_EQ(m.slotAcceptance[0], 1.0);
  EXPECT_DOUBLE_EQ(m.slotAcceptance[1], 0.5);
  EXPECT_DOUBLE_EQ(m.slotAcceptance[2], 0.5);
  ASSERT_EQ(m.anchorBins.size(), 2u);
  EXPECT_EQ(m.anchorBins[1].begin, 256);  // anchor 300
  EXPECT_DOUBLE_EQ(m.anchorBins[1].meanLength.estimate, 4.0);
  // Scored: .85 y, .42 n (L1's slot 2 is past its mismatch), .99 y, .65 y, .55 y.
  const Calibration& c = m.calibration;
  EXPECT_EQ(c.scoredSlots, 5);
  EXPECT_EQ(c.unscoredSlots, 0);
  EXPECT_EQ(c.bins[4].count, 1);
  EXPECT_DOUBLE_EQ(c.bins[4].acceptedFraction, 0.0);
  EXPECT_EQ(c.bins[7].count, 0);  // L1's slot 2 (p .60) would land in bin 6, which holds only .65
  EXPECT_EQ(c.bins[6].count, 1);
  EXPECT_NEAR(c.expectedCalibrationError, (.42 + .45 + .35 + .15 + .01) / 5, 1e-6);
}

TEST(PositionMetrics, NoTopKTablesMeansNoCalibration) {
  Reader reader(writeHandSession(0));
  const auto all = computePositionMetrics(reader, reader.runs().at(0));
  const PositionMetrics& m = ofMode(all, TF);
  EXPECT_EQ(m.calibration.scoredSlots, 0);
  EXPECT_EQ(m.calibration.unscoredSlots, 0);
  EXPECT_DOUBLE_EQ(m.slotAcceptance[0], 0.75);  // the other views do not need them
  EXPECT_NE(formatPositionSection(m, "hand").find("no top-k probabilities"), std::string::npos);
}

// The export and the summary's section carry the analysis's figures, not figures of their own.
TEST(PositionMetrics, ExportAndSummaryShowTheComputedFigures) {
  Reader reader(writeHandSession(2));
  const auto all = computePositionMetrics(reader, reader.runs().at(0));
  const PositionMetrics& tf = ofMode(all, TF);

  std::ostringstream json;
  exportPositionMetrics(reader, ExportFormat::Json, json);
  const auto parsed = nlohmann::json::parse(json.str());
  ASSERT_EQ(parsed.size(), 2u);
  const auto& row = parsed[0]["mode"] == "teacher-forced" ? parsed[0] : parsed[1];
  EXPECT_EQ(row["slot_acceptance"].get<std::vector<double>>(), tf.slotAcceptance);
  EXPECT_DOUBLE_EQ(row["calibration"]["ece"].get<double>(), tf.calibration.expectedCalibrationError);
  EXPECT_EQ(row["calibration"]["slots"].get<int>(), 11);
  EXPECT_DOUBLE_EQ(row["tau_by_anchor_position"][0]["tau"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(row["tau_by_anchor_position"][0]["tau_ci95"][0].get<double>(), tf.anchorBins[0].meanLength.low);
  EXPECT_EQ(row["calibration"]["bins"][7]["slots"].get<int>(), 3);

  std::ostringstream csv;
  exportPositionMetrics(reader, ExportFormat::Csv, csv);
  const std::string text = csv.str();
  EXPECT_EQ(text.substr(0, text.find('\n')), "run_id,mode,table,index,begin,end,count,value,low,high,mean_probability");
  EXPECT_NE(text.find("1,teacher-forced,slot_acceptance,1,1.0,2.0,4,0.5,0.5,0.5,0.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("1,teacher-forced,tau_by_anchor_position,0,0.0,32.0,2,2.5,"), std::string::npos) << text;
  EXPECT_NE(text.find("1,live,reliability,4,0.4,0.5,1,0.0,0.0,0.0,0.41999998688697815\n"), std::string::npos) << text;

  const std::string section = formatPositionSection(tf, "hand");
  EXPECT_NE(section.find("positions: hand (teacher-forced, 4 steps, B = 4)"), std::string::npos) << section;
  EXPECT_NE(section.find("0.750  0.500  0.250"), std::string::npos) << section;
  EXPECT_NE(section.find("ECE 0.271 over 11 slots"), std::string::npos) << section;
  EXPECT_NE(section.find("[0,32)"), std::string::npos) << section;
  EXPECT_NE(section.find("2.500"), std::string::npos) << section;
}

// DSpark's confidence head: the predicted survival of each prefix (the product of the slot
// confidences) in reliability bins against whether the prefix was accepted, and the verify
// lengths a threshold on it chooses, worked out by hand.
TEST(PositionMetrics, ConfidenceCalibrationAndVerifyLengthsMatchTheHandComputation) {
  RunRecord run;
  run.blockSize = 4;
  PositionTally tally(run);
  // Confidences exact in binary, so no product lands on a bin's edge by rounding.
  StepRecord a = step(TF, 0, 10, 2, {1, 2, 3}, {1, 2, 9}, {}, {});
  a.draftConfidence = {0.75f, 0.5f, 0.5f};  // survival .75 .375 .1875; survived y y n
  StepRecord b = step(TF, 0, 20, 0, {4, 5, 6}, {7, 5, 6}, {}, {});
  b.draftConfidence = {0.875f, 0.75f, 0.75f};  // survival .875 .65625 .4921875; survived n n n
  tally.add(a);
  tally.add(b);
  const auto all = tally.finish();
  const PositionMetrics& m = ofMode(all, TF);
  const Calibration& c = m.confidenceCalibration;
  EXPECT_EQ(c.scoredSlots, 6);
  EXPECT_EQ(c.bins[7].count, 1);
  EXPECT_DOUBLE_EQ(c.bins[7].acceptedFraction, 1.0);
  EXPECT_EQ(c.bins[3].count, 1);
  EXPECT_DOUBLE_EQ(c.bins[3].acceptedFraction, 1.0);
  EXPECT_EQ(c.bins[1].count, 1);
  EXPECT_EQ(c.bins[8].count, 1);
  EXPECT_DOUBLE_EQ(c.bins[8].acceptedFraction, 0.0);
  EXPECT_NEAR(c.expectedCalibrationError, (0.25 + 0.625 + 0.1875 + 0.875 + 0.65625 + 0.4921875) / 6, 1e-12);
  EXPECT_NEAR(c.acceptedFraction, 2.0 / 6, 1e-12);
  EXPECT_DOUBLE_EQ(m.fixedVerifiedDrafts, 3.0);
  ASSERT_EQ(m.verifyLengths.size(), std::size(kVerifyThresholds));
  const VerifyLengthWhatIf& half = m.verifyLengths[4];  // threshold .5: lengths 1 and 2
  EXPECT_DOUBLE_EQ(half.threshold, 0.5);
  EXPECT_DOUBLE_EQ(half.meanVerifiedDrafts, 1.5);
  EXPECT_DOUBLE_EQ(half.meanAcceptLength, 1.5);  // (min(2,1)+1 + min(0,2)+1) / 2
  EXPECT_DOUBLE_EQ(half.savedDraftsPerStep, 1.5);
  EXPECT_DOUBLE_EQ(half.lostTokensPerStep, 0.5);  // a's second accepted draft
  const VerifyLengthWhatIf& high = m.verifyLengths[8];  // threshold .9: nothing verified
  EXPECT_DOUBLE_EQ(high.meanVerifiedDrafts, 0.0);
  EXPECT_DOUBLE_EQ(high.meanAcceptLength, 1.0);
  EXPECT_DOUBLE_EQ(high.savedDraftsPerStep, 3.0);
  EXPECT_DOUBLE_EQ(high.lostTokensPerStep, 1.0);
  const std::string text = formatPositionSection(m, "dspark");
  EXPECT_NE(text.find("confidence head: predicted survival"), std::string::npos) << text;
  EXPECT_NE(text.find("ECE 0.514"), std::string::npos) << text;
  EXPECT_EQ(positionMetricsJson(m)["verify_length_by_confidence"][4]["tau"], 1.5);
}

TEST(PositionMetrics, NoConfidenceMeansNoConfidenceSection) {
  RunRecord run;
  run.blockSize = 4;
  PositionTally tally(run);
  tally.add(step(TF, 0, 10, 2, {1, 2, 3}, {1, 2, 9}, {}, {}));
  const PositionMetrics m = tally.finish().front();
  EXPECT_EQ(m.confidenceCalibration.scoredSlots, 0);
  EXPECT_TRUE(m.verifyLengths.empty());
  EXPECT_EQ(formatPositionSection(m, "plain").find("confidence head"), std::string::npos);
}
