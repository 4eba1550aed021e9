#include "dfi/analysis/run_comparison.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <map>
#include <unordered_map>

#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/run_summary.h"
#include "dfi/session/record_fields.h"

namespace dfi::analysis {
namespace {

// A series is one recorded run: one response per prompt, in ascending prompt order.
std::vector<SummaryResponse> seriesResponses(const ComparedSeries& series) {
  std::map<session::PromptId, SummaryResponse> byPrompt;
  for (const ComparedStep& s : series.steps) byPrompt[s.prompt].acceptance.stepAcceptLengths.push_back(s.acceptLength);
  std::vector<SummaryResponse> responses;
  responses.reserve(byPrompt.size());
  for (auto& [prompt, response] : byPrompt) {
    response.promptId = prompt;
    responses.push_back(std::move(response));
  }
  return responses;
}

// The run summary's figures (promptTaus, bootstrapMean, tauVllm: the same functions as
// summarizeRuns) plus what only the compare view draws: the histogram and per-slot rates.
SeriesStatistics summarizeOne(const ComparedSeries& series, int resamples) {
  SeriesStatistics stats;
  const std::vector<SummaryResponse> responses = seriesResponses(series);
  std::vector<ResponseAcceptance> acceptances;
  acceptances.reserve(responses.size());
  for (const SummaryResponse& r : responses) acceptances.push_back(r.acceptance);
  std::vector<int> lengths;
  lengths.reserve(series.steps.size());
  for (const ComparedStep& s : series.steps) lengths.push_back(s.acceptLength);

  PromptTaus perPrompt = promptTaus(responses);  // ascending prompts, as the pair join needs
  stats.prompts.assign(perPrompt.prompts.begin(), perPrompt.prompts.end());
  stats.promptTau = std::move(perPrompt.taus);
  stats.tau = bootstrapMean(stats.promptTau, 0.95, resamples);
  stats.tauVllm = tauVllm(acceptances);
  stats.steps = static_cast<std::int64_t>(series.steps.size());
  stats.histogram = acceptanceHistogram(lengths, series.blockSize);
  stats.slotRates = slotAcceptanceRates(lengths, series.blockSize);
  return stats;
}

}  // namespace

std::vector<ComparedSeries> loadComparedSeries(const std::vector<session::RunRecord>& runs,
                                               const StepSummaryScan& forEachStepSummary) {
  std::vector<ComparedSeries> out;
  for (const session::RunRecord& run : runs) {
    std::map<session::EvaluationMode, ComparedSeries> byMode;
    int longest = 0;
    forEachStepSummary(run.runId, [&](const session::StepSummary& s) {
      byMode[s.mode].steps.push_back({s.promptId, s.anchorPosition, s.stepId, s.stepIndex, s.acceptLength()});
      longest = std::max(longest, s.draftSlots + 1);
    });
    const std::string name = run.name.empty() ? "run " + std::to_string(run.runId) : run.name;
    for (auto& [mode, series] : byMode) {
      series.run = run.runId;
      series.mode = mode;
      series.label = byMode.size() > 1 ? name + " (" + std::string(enumName(mode)) + ")" : name;
      series.drafter = std::filesystem::path(run.drafter.path).filename().string();
      // A block size missing from the run record still covers every recorded step.
      series.blockSize = std::max(run.blockSize, longest);
      out.push_back(std::move(series));
    }
  }
  return out;
}

std::vector<SeriesStatistics> summarizeSeries(const std::vector<ComparedSeries>& series, int resamples) {
  std::vector<std::future<SeriesStatistics>> pending;
  pending.reserve(series.size());
  for (const ComparedSeries& s : series)
    pending.push_back(std::async(std::launch::async, [&s, resamples] { return summarizeOne(s, resamples); }));
  std::vector<SeriesStatistics> out;
  out.reserve(series.size());
  for (auto& f : pending) out.push_back(f.get());
  return out;
}

PairComparison comparePair(const ComparedSeries& a, const SeriesStatistics& statsA, const ComparedSeries& b,
                           const SeriesStatistics& statsB, int resamples) {
  PairComparison pair;
  // Both prompt lists are ascending: a merge finds the prompts both answered.
  for (std::size_t i = 0, j = 0; i < statsA.prompts.size() && j < statsB.prompts.size();) {
    if (statsA.prompts[i] < statsB.prompts[j]) {
      ++i;
    } else if (statsB.prompts[j] < statsA.prompts[i]) {
      ++j;
    } else {
      pair.prompts.push_back(statsA.prompts[i]);
      pair.tauA.push_back(statsA.promptTau[i++]);
      pair.tauB.push_back(statsB.promptTau[j++]);
    }
  }
  pair.difference = bootstrapPairedDifference(pair.tauA, pair.tauB, 0.95, resamples);

  struct Key {
    session::PromptId prompt;
    std::int64_t anchor;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::int64_t>()(k.prompt * 1000003 + k.anchor);
    }
  };
  std::unordered_map<Key, const ComparedStep*, KeyHash> blocksA;
  blocksA.reserve(a.steps.size());
  for (const ComparedStep& s : a.steps) blocksA.emplace(Key{s.prompt, s.anchor}, &s);
  for (const ComparedStep& s : b.steps) {
    const auto it = blocksA.find(Key{s.prompt, s.anchor});
    if (it == blocksA.end()) continue;
    ++pair.matchedBlocks;
    const ComparedStep& other = *it->second;
    if (s.acceptLength < other.acceptLength)
      pair.regressions.push_back({s.prompt, s.anchor, other.step, s.step, s.stepIndex, other.acceptLength, s.acceptLength});
  }
  std::sort(pair.regressions.begin(), pair.regressions.end(), [](const BlockRegression& x, const BlockRegression& y) {
    const int dropX = x.acceptA - x.acceptB, dropY = y.acceptA - y.acceptB;
    if (dropX != dropY) return dropX > dropY;
    return std::tie(x.prompt, x.anchor) < std::tie(y.prompt, y.anchor);
  });
  return pair;
}

}  // namespace dfi::analysis
