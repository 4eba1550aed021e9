#pragma once
// Acceptance by position, the three views a person debugging a drafter asks for first:
// - per block slot: the fraction of steps whose draft slot i was accepted (vLLM's per-position
//   acceptance rate, see slotAcceptanceRates);
// - by the anchor's position in the context, in bins: the mean acceptance length of the steps
//   whose anchor falls in the bin, where a sliding window or a long context starts to hurt;
// - the drafter's calibration: its probability of the token it drafted at a slot against how
//   often that token was accepted (a reliability diagram and its expected calibration error).
// One implementation for `dflash-eval summary`, `export --what positions` and the GUI's
// positions panel. Torch-free.

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "dfi/analysis/selector_metrics.h"
#include "dfi/analysis/statistics.h"
#include "dfi/session/reader.h"
#include "dfi/session/records.h"

namespace dfi::analysis {

// Anchor-position bins: [0, 32), [32, 64), [64, 128), [128, 256), ...: doubling, so that a 32k
// context needs 11 bins and a power-of-two sliding window (what drafters use) ends exactly on a
// bin's edge, while a short chat (the demo's anchors lie between 18 and 117) still gets three.
inline constexpr std::int64_t kFirstAnchorBinEnd = 32;
int anchorBinOf(std::int64_t anchorPosition);
std::pair<std::int64_t, std::int64_t> anchorBinRange(int bin);  // [begin, end)

struct AnchorBinTau {
  std::int64_t begin = 0, end = 0;  // anchor positions [begin, end)
  std::int64_t steps = 0;
  std::int64_t prompts = 0;  // responses with a step in the bin
  // The bin's mean acceptance length, pooled over its steps (vLLM's tau restricted to the bin),
  // with the percentile-bootstrap interval over prompts (a prompt's steps resampled together).
  Interval meanLength;
};

// Ten equal-width bins of [0, 1] by the drafter's probability of its draft.
inline constexpr int kReliabilityBins = 10;
struct ReliabilityBin {
  double begin = 0, end = 0;  // probabilities [begin, end); the last bin includes 1
  std::int64_t count = 0;     // scored slots in the bin
  double meanProbability = 0;   // mean predicted probability of the bin's drafts
  double acceptedFraction = 0;  // fraction of them accepted
};

// What "accepted" means for calibration, per step mode. The drafter's probability at slot s is
// a prediction that its draft equals the target's token at that position given the true text
// before it, so a slot is scored only where the record has that target token:
// - teacher-forced and DDTree steps (DDTree steps are built on teacher-forced ones): every slot;
//   the target's tokens are the target's own continuation of the true text at every slot, and a
//   slot counts as accepted when draft == target, whatever the slots before it did;
// - live steps: the slots the verifier reached, 0..acceptedCount (the last one is the first
//   mismatch, if any); a slot counts as accepted when it is one of the acceptedCount accepted.
//   Past the first mismatch the target continues a rejected draft, so those slots say nothing.
// The probability is the draft's entry in the slot's recorded top-k table (StepRecord::topKIds /
// topKProbs, k = RunRecord::topK); a draft missing from it (a sampled draft outside the top k)
// is counted in `unscoredSlots`, not scored.
struct Calibration {
  std::vector<ReliabilityBin> bins;  // kReliabilityBins of them once computed
  std::int64_t scoredSlots = 0;    // 0 when the run recorded no top-k tables (`slots` is a Qt macro)
  std::int64_t unscoredSlots = 0;  // reached slots whose draft is missing from its top-k table
  // ECE: sum over bins of count / scoredSlots * |acceptedFraction - meanProbability|.
  double expectedCalibrationError = 0;
  double meanProbability = 0;   // over every scored slot
  double acceptedFraction = 0;  // over every scored slot
};

// DSpark's confidence head predicts each slot's acceptance rate; the product of the rates up to
// slot s is its prediction that the first s drafts all survive verification, which is what a
// confidence-driven verify length thresholds. Scored on every slot with a draft (and, teacher-
// forced, a target token): the prefix survives when s < the step's accepted drafts (past the
// first mismatch every longer prefix is known to fail, live too).
//
// The verify length a threshold t chooses: the leading slots whose predicted survival is at least
// t (a prefix: survival only falls). Against the fixed block, per step: the drafts it would not
// have verified, and the accepted tokens it would have lost (accepted beyond the length).
struct VerifyLengthWhatIf {
  double threshold = 0;
  double meanVerifiedDrafts = 0;  // per step
  double meanAcceptLength = 0;    // tau under the threshold: min(accepted, length) + 1
  double savedDraftsPerStep = 0;  // drafts - length
  double lostTokensPerStep = 0;   // accepted - min(accepted, length)
};
inline constexpr double kVerifyThresholds[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
// The drafts of `step` a threshold verifies: the leading ones whose predicted prefix survival
// (the product of draft_confidence up to them) is at least `threshold`; 0 without confidence.
int confidenceVerifyLength(const session::StepRecord& step, double threshold);

// A step's acceptance length at temperature 1 from its slots' overlap (speculators' accept_len
// of one block): 1 plus the sum over its slots of the overlaps' running product; nullopt for a
// step without slot_overlap.
std::optional<double> analyticAcceptLength(const session::StepRecord& step);

// One per (run, step mode) present, as RunMetrics: live, teacher-forced and DDTree steps of a
// run are not mixed.
struct PositionMetrics {
  session::RunId runId = 0;
  session::EvaluationMode mode = session::EvaluationMode::Live;
  std::int32_t blockSize = 0;
  std::int64_t steps = 0;
  // slotAcceptance[i]: fraction of steps whose draft slot i (0-based, i = 0..B-2) was accepted.
  // Defined as vLLM's per-position acceptance rate, V1 engine (vllm/v1/spec_decode/metrics.py,
  // read at vllm-project/vllm commit 016a858: SpecDecodingStats.observe_draft adds 1 to
  // num_accepted_tokens_per_pos[i] for every i < the step's accepted drafts, and the logged
  // "Per-position acceptance rate" is that count / num_drafts), on the step's counted acceptance
  // length (acceptLength() - 1 accepted drafts), so 1 + sum(slotAcceptance) is the run's tau(vllm).
  std::vector<double> slotAcceptance;
  std::vector<AnchorBinTau> anchorBins;  // the bins that have steps, by position
  Calibration calibration;
  // DSpark drafters with a confidence head (empty bins otherwise): predicted prefix survival.
  Calibration confidenceCalibration;
  std::vector<VerifyLengthWhatIf> verifyLengths;  // one per kVerifyThresholds; empty without confidence
  double fixedVerifiedDrafts = 0;                 // per step, the drafts a fixed block verifies
  std::optional<SelectorMetrics> selector;        // DFlash2 drafters: their candidate selector
  // Teacher-forced steps that recorded their slots' overlap with the target (slot_overlap): the
  // acceptance speculative sampling at temperature 1 would have, as speculators reports it while
  // training (models/dspark/metrics.py): per slot the mean overlap (its accept_rate by slot),
  // and its accept_len, per step 1 plus the sum of the overlaps' running products (a slot past
  // the sequence ends the product), averaged over the steps, with the percentile-bootstrap
  // interval over prompts. Empty / nullopt without overlap.
  std::vector<double> slotOverlap;
  // Per slot the mean over those steps of the overlaps' running product up to it (0 past a step's
  // last known slot): the chance at T=1 that the slot is reached and accepted, the counterpart of
  // slotAcceptance, so that 1 + its sum is the analytic accept_len as 1 + slotAcceptance's is tau.
  std::vector<double> slotOverlapSurvival;
  std::optional<Interval> analyticAcceptLength;
};

// Adds a run's steps one at a time (any order, any mode) and returns its metrics per mode; keeps
// per step one acceptance length, no token arrays.
class PositionTally {
 public:
  explicit PositionTally(const session::RunRecord& run);
  void add(const session::StepRecord& step);
  std::vector<PositionMetrics> finish(double confidence = 0.95, int resamples = kBootstrapResamples) const;

 private:
  // A reliability diagram being filled: per bin the predictions' sum, the outcomes and the count.
  struct ReliabilityTally {
    std::vector<double> probabilitySum = std::vector<double>(kReliabilityBins, 0.0);
    std::vector<std::int64_t> acceptedCount = std::vector<std::int64_t>(kReliabilityBins, 0);
    std::vector<std::int64_t> slotCount = std::vector<std::int64_t>(kReliabilityBins, 0);
    std::int64_t unscored = 0;
    void add(double probability, bool accepted);
    Calibration finish() const;
  };
  struct ModeTally {
    std::vector<int> acceptLengths;
    // bin -> prompt -> (sum of lengths, steps)
    std::map<int, std::map<session::PromptId, std::pair<double, double>>> bins;
    ReliabilityTally draftProbability, confidence;
    // Per kVerifyThresholds: sums over the steps with confidence of the verified drafts, the
    // accepted length under the threshold, and the lost tokens; and those steps' drafts.
    std::vector<double> verified = std::vector<double>(std::size(kVerifyThresholds), 0.0);
    std::vector<double> lengths = std::vector<double>(std::size(kVerifyThresholds), 0.0);
    std::vector<double> lost = std::vector<double>(std::size(kVerifyThresholds), 0.0);
    std::int64_t confidenceSteps = 0;
    double drafts = 0;
    SelectorTally selector;
    // Steps with slot_overlap: per slot the overlap's sum and count; per prompt the sum of the
    // steps' analytic lengths and the steps.
    std::vector<double> overlapSum, survivalSum;
    std::vector<std::int64_t> overlapCount;
    std::int64_t overlapSteps = 0;
    std::map<session::PromptId, std::pair<double, double>> analytic;
  };
  void addCalibration(const session::StepRecord& step, ModeTally& tally) const;
  static void addConfidence(const session::StepRecord& step, ModeTally& tally);
  static void addOverlap(const session::StepRecord& step, ModeTally& tally);

  session::RunId runId_;
  std::int32_t blockSize_;
  std::int32_t topK_;
  std::map<session::EvaluationMode, ModeTally> modes_;
};

// Every step of `run` read once.
std::vector<PositionMetrics> computePositionMetrics(session::Reader& reader, const session::RunRecord& run);

}  // namespace dfi::analysis
