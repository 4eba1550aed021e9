#include "dfi/analysis/position_metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <span>
#include <tuple>

namespace dfi::analysis {

using session::EvaluationMode;
using session::StepRecord;

int anchorBinOf(std::int64_t anchorPosition) {
  if (anchorPosition < kFirstAnchorBinEnd) return 0;
  // Bin b >= 1 holds [32 * 2^(b-1), 32 * 2^b).
  return std::bit_width(static_cast<std::uint64_t>(anchorPosition / kFirstAnchorBinEnd));
}

std::pair<std::int64_t, std::int64_t> anchorBinRange(int bin) {
  if (bin == 0) return {0, kFirstAnchorBinEnd};
  return {kFirstAnchorBinEnd << (bin - 1), kFirstAnchorBinEnd << bin};
}

PositionTally::PositionTally(const session::RunRecord& run)
    : runId_(run.runId), blockSize_(run.blockSize), topK_(run.topK) {}

void PositionTally::add(const StepRecord& step) {
  ModeTally& tally = modes_[step.mode];
  const int length = step.acceptLength();
  tally.acceptLengths.push_back(length);
  auto& [lengthSum, steps] = tally.bins[anchorBinOf(step.anchorPosition)][step.promptId];
  lengthSum += length;
  steps += 1;
  addCalibration(step, tally);
  addConfidence(step, tally);
  addOverlap(step, tally);
  tally.selector.add(step);
}

std::optional<double> analyticAcceptLength(const StepRecord& step) {
  if (step.slotOverlap.empty()) return std::nullopt;
  double survival = 1, length = 1;
  for (float overlap : step.slotOverlap) {
    survival *= std::clamp(static_cast<double>(overlap), 0.0, 1.0);
    length += survival;
  }
  return length;
}

void PositionTally::addOverlap(const StepRecord& step, ModeTally& tally) {
  const std::optional<double> length = analyticAcceptLength(step);
  if (!length) return;
  if (tally.overlapSum.size() < step.slotOverlap.size()) {
    tally.overlapSum.resize(step.slotOverlap.size(), 0.0);
    tally.survivalSum.resize(step.slotOverlap.size(), 0.0);
    tally.overlapCount.resize(step.slotOverlap.size(), 0);
  }
  double survival = 1;
  for (std::size_t s = 0; s < step.slotOverlap.size(); ++s) {
    const double overlap = std::clamp(static_cast<double>(step.slotOverlap[s]), 0.0, 1.0);
    survival *= overlap;
    tally.overlapSum[s] += overlap;
    tally.survivalSum[s] += survival;
    ++tally.overlapCount[s];
  }
  ++tally.overlapSteps;
  auto& [lengthSum, steps] = tally.analytic[step.promptId];
  lengthSum += *length;
  steps += 1;
}

void PositionTally::ReliabilityTally::add(double probability, bool accepted) {
  probability = std::clamp(probability, 0.0, 1.0);
  const auto bin = static_cast<std::size_t>(std::min(static_cast<int>(probability * kReliabilityBins), kReliabilityBins - 1));
  probabilitySum[bin] += probability;
  acceptedCount[bin] += accepted ? 1 : 0;
  slotCount[bin] += 1;
}

Calibration PositionTally::ReliabilityTally::finish() const {
  Calibration c;
  double sum = 0;
  std::int64_t accepted = 0;
  for (int bin = 0; bin < kReliabilityBins; ++bin) {
    const auto i = static_cast<std::size_t>(bin);
    ReliabilityBin r{.begin = static_cast<double>(bin) / kReliabilityBins,
                     .end = static_cast<double>(bin + 1) / kReliabilityBins,
                     .count = slotCount[i]};
    if (r.count > 0) {
      r.meanProbability = probabilitySum[i] / static_cast<double>(r.count);
      r.acceptedFraction = static_cast<double>(acceptedCount[i]) / static_cast<double>(r.count);
    }
    c.scoredSlots += r.count;
    sum += probabilitySum[i];
    accepted += acceptedCount[i];
    c.bins.push_back(r);
  }
  c.unscoredSlots = unscored;
  if (c.scoredSlots > 0) {
    const auto total = static_cast<double>(c.scoredSlots);
    for (const ReliabilityBin& r : c.bins)
      c.expectedCalibrationError += static_cast<double>(r.count) / total * std::abs(r.acceptedFraction - r.meanProbability);
    c.meanProbability = sum / total;
    c.acceptedFraction = static_cast<double>(accepted) / total;
  }
  return c;
}

int confidenceVerifyLength(const StepRecord& step, double threshold) {
  const std::size_t slots = std::min(step.draftConfidence.size(), step.draftTokens.size());
  double survival = 1;
  int length = 0;
  for (std::size_t s = 0; s < slots; ++s) {
    survival *= std::clamp(static_cast<double>(step.draftConfidence[s]), 0.0, 1.0);
    if (survival < threshold) break;
    ++length;
  }
  return length;
}

void PositionTally::addConfidence(const StepRecord& step, ModeTally& tally) {
  const std::size_t slots = std::min(step.draftConfidence.size(), step.draftTokens.size());
  if (slots == 0) return;
  const int accepted = step.acceptLength() - 1;  // as counted, so the fixed block's tau is the run's
  double survival = 1;
  for (std::size_t s = 0; s < slots; ++s) {
    if (step.mode != EvaluationMode::Live && (s >= step.targetTokens.size() || step.targetTokens[s] < 0)) break;
    survival *= std::clamp(static_cast<double>(step.draftConfidence[s]), 0.0, 1.0);
    tally.confidence.add(survival, static_cast<int>(s) < step.acceptedCount);
  }
  ++tally.confidenceSteps;
  tally.drafts += static_cast<double>(step.draftTokens.size());
  for (std::size_t t = 0; t < std::size(kVerifyThresholds); ++t) {
    const int length = confidenceVerifyLength(step, kVerifyThresholds[t]);
    tally.verified[t] += length;
    tally.lengths[t] += std::min(accepted, length) + 1;
    tally.lost[t] += accepted - std::min(accepted, length);
  }
}

void PositionTally::addCalibration(const StepRecord& step, ModeTally& tally) const {
  const auto k = static_cast<std::size_t>(std::max(topK_, 0));
  const std::size_t slots = step.draftTokens.size();
  if (k == 0 || step.topKIds.size() < slots * k || step.topKProbs.size() < slots * k) return;
  const bool live = step.mode == EvaluationMode::Live;
  // Live: the reached slots (the accepted ones and the first mismatch); otherwise every slot
  // with a target token (position_metrics.h says why).
  const std::size_t scored =
      live ? std::min(slots, static_cast<std::size_t>(std::max(step.acceptedCount, 0)) + 1)
           : std::min(slots, step.targetTokens.size());
  for (std::size_t s = 0; s < scored; ++s) {
    const auto ids = std::span(step.topKIds).subspan(s * k, k);
    const auto at = std::ranges::find(ids, step.draftTokens[s]);
    if (at == ids.end()) {
      ++tally.draftProbability.unscored;
      continue;
    }
    const double probability = step.topKProbs[s * k + static_cast<std::size_t>(at - ids.begin())];
    const bool accepted = live ? s < static_cast<std::size_t>(step.acceptedCount) : step.draftTokens[s] == step.targetTokens[s];
    tally.draftProbability.add(probability, accepted);
  }
}

std::vector<PositionMetrics> PositionTally::finish(double confidence, int resamples) const {
  std::vector<PositionMetrics> result;
  for (const auto& [mode, tally] : modes_) {
    PositionMetrics m{.runId = runId_, .mode = mode};
    m.steps = static_cast<std::int64_t>(tally.acceptLengths.size());
    // A block size missing from the run record still covers the longest step (as RunMetrics).
    const int longest = tally.acceptLengths.empty() ? 0 : std::ranges::max(tally.acceptLengths);
    m.blockSize = std::max(blockSize_, longest);
    m.slotAcceptance = slotAcceptanceRates(tally.acceptLengths, m.blockSize);

    for (const auto& [bin, byPrompt] : tally.bins) {
      AnchorBinTau b;
      std::tie(b.begin, b.end) = anchorBinRange(bin);
      std::vector<double> sums, counts;  // per prompt, in prompt order (a fixed resampling order)
      for (const auto& [prompt, sumAndSteps] : byPrompt) {
        sums.push_back(sumAndSteps.first);
        counts.push_back(sumAndSteps.second);
        b.steps += static_cast<std::int64_t>(sumAndSteps.second);
      }
      b.prompts = static_cast<std::int64_t>(byPrompt.size());
      b.meanLength = bootstrapRatio(sums, counts, confidence, resamples);
      m.anchorBins.push_back(b);
    }

    for (std::size_t i = 0; i < tally.overlapSum.size(); ++i) {
      m.slotOverlap.push_back(tally.overlapSum[i] / static_cast<double>(tally.overlapCount[i]));
      m.slotOverlapSurvival.push_back(tally.survivalSum[i] / static_cast<double>(tally.overlapSteps));
    }
    if (!tally.analytic.empty()) {
      std::vector<double> sums, counts;  // per prompt, in prompt order
      for (const auto& [prompt, sumAndSteps] : tally.analytic) {
        sums.push_back(sumAndSteps.first);
        counts.push_back(sumAndSteps.second);
      }
      m.analyticAcceptLength = bootstrapRatio(sums, counts, confidence, resamples);
    }

    m.calibration = tally.draftProbability.finish();
    m.selector = tally.selector.finish();
    m.confidenceCalibration = tally.confidence.finish();
    if (tally.confidenceSteps > 0) {
      const auto steps = static_cast<double>(tally.confidenceSteps);
      m.fixedVerifiedDrafts = tally.drafts / steps;
      for (std::size_t t = 0; t < std::size(kVerifyThresholds); ++t)
        m.verifyLengths.push_back({.threshold = kVerifyThresholds[t],
                                   .meanVerifiedDrafts = tally.verified[t] / steps,
                                   .meanAcceptLength = tally.lengths[t] / steps,
                                   .savedDraftsPerStep = (tally.drafts - tally.verified[t]) / steps,
                                   .lostTokensPerStep = tally.lost[t] / steps});
    }
    result.push_back(std::move(m));
  }
  return result;
}

std::vector<PositionMetrics> computePositionMetrics(session::Reader& reader, const session::RunRecord& run) {
  PositionTally tally(run);
  reader.forEachStep(run.runId, [&](const StepRecord& step) { tally.add(step); });
  return tally.finish();
}

}  // namespace dfi::analysis
