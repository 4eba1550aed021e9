#include "dfi/analysis/run_summary.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "dfi/analysis/summary_fields.h"
#include "dfi/base/field_json.h"

namespace dfi::analysis {
namespace {

double meanOf(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Per-response tau keyed by (prompt, repeat): what paired comparisons join on.
std::map<std::pair<std::int64_t, int>, double> responseTaus(const SummaryRun& run) {
  std::map<std::pair<std::int64_t, int>, double> taus;
  for (const auto& r : run.responses)
    if (const auto tau = responseTau(r.acceptance)) taus[{r.promptId, r.sample}] = *tau;
  return taus;
}

SummaryRow rowOf(const SummaryRun& run, const std::string& dataset, const std::vector<SummaryResponse>& responses,
                 double confidence, int resamples) {
  SummaryRow row{run.drafter, run.mode, run.variant, dataset, run.sampling};
  row.runIds = run.runIds;
  std::vector<ResponseAcceptance> acceptances;
  std::map<int, std::vector<double>> byRepeat;
  for (const auto& r : responses) {
    acceptances.push_back(r.acceptance);
    row.steps += static_cast<std::int64_t>(r.acceptance.stepAcceptLengths.size());
    if (const auto tau = responseTau(r.acceptance)) {
      byRepeat[r.sample].push_back(*tau);
      ++row.responses;
    }
  }
  std::vector<double> perRepeat;
  for (const auto& [repeat, taus] : byRepeat) perRepeat.push_back(meanOf(taus));
  row.tau = bootstrapMean(promptTaus(responses).taus, confidence, resamples);
  if (perRepeat.size() > 1) {
    row.repeats = static_cast<int>(perRepeat.size());
    row.tauOverRepeats = studentMean95(perRepeat);
  }
  row.tauVllm = tauVllmInterval(responses, confidence, resamples);
  row.tauVllm.estimate = tauVllm(acceptances);  // the pooled value itself, not the ratio's rounding
  if (run.mode == "live") {
    row.tauSglang = tauSglang(acceptances);
    row.stepCounting = run.stepCounting;
  }
  return row;
}

// Responses in prompt order, whatever order they were recorded in: the bootstrap resamples by
// index, so merged shards (another order of the same responses) must print the same intervals
// as the unsharded run.
std::vector<SummaryResponse> inPromptOrder(const SummaryRun& run) {
  std::vector<SummaryResponse> sorted = run.responses;
  std::ranges::stable_sort(sorted, {}, [](const SummaryResponse& r) { return std::pair(r.promptId, r.sample); });
  return sorted;
}

}  // namespace

Interval tauVllmInterval(std::span<const SummaryResponse> responses, double confidence, int resamples) {
  std::map<std::int64_t, std::pair<double, double>> byPrompt;  // accepted lengths, steps
  for (const auto& r : responses)
    for (int length : r.acceptance.stepAcceptLengths) {
      byPrompt[r.promptId].first += length;
      byPrompt[r.promptId].second += 1;
    }
  std::vector<double> lengths, steps;
  for (const auto& [prompt, sums] : byPrompt) {
    lengths.push_back(sums.first);
    steps.push_back(sums.second);
  }
  return bootstrapRatio(lengths, steps, confidence, resamples);
}

PromptTaus promptTaus(std::span<const SummaryResponse> responses) {
  std::map<std::int64_t, std::vector<double>> byPrompt;
  for (const SummaryResponse& r : responses)
    if (const auto tau = responseTau(r.acceptance)) byPrompt[r.promptId].push_back(*tau);
  PromptTaus out;
  for (const auto& [prompt, taus] : byPrompt) {
    out.prompts.push_back(prompt);
    out.taus.push_back(meanOf(taus));
  }
  return out;
}

std::vector<std::string> drafterLabels(const std::vector<std::string>& paths) {
  auto tail = [](const std::string& path, std::size_t parts) {
    std::vector<std::string> names;
    for (const auto& part : std::filesystem::path(path).lexically_normal())
      if (!part.empty() && part != "/") names.push_back(part.string());
    std::string label;
    for (std::size_t i = names.size() - std::min(parts, names.size()); i < names.size(); ++i)
      label += (label.empty() ? "" : "/") + names[i];
    return label;
  };
  std::vector<std::string> labels;
  for (const std::string& path : paths) {
    std::size_t parts = 1;
    // Grow this label until no other distinct path shares it (or the whole path is used).
    for (; parts < 64; ++parts) {
      const std::string mine = tail(path, parts);
      const bool clash = std::ranges::any_of(paths, [&](const std::string& other) {
        return std::filesystem::path(other).lexically_normal() != std::filesystem::path(path).lexically_normal() &&
               tail(other, parts) == mine;
      });
      if (!clash) break;
    }
    labels.push_back(tail(path, parts));
  }
  return labels;
}

std::vector<SummaryRow> summarizeRuns(std::span<const SummaryRun> runs, double confidence, int resamples) {
  std::vector<SummaryRow> rows;
  for (const SummaryRun& run : runs) {
    const std::vector<SummaryResponse> sorted = inPromptOrder(run);
    std::vector<std::string> datasets;  // in order of first appearance
    for (const auto& r : sorted)
      if (std::ranges::find(datasets, r.dataset) == datasets.end()) datasets.push_back(r.dataset);
    for (const std::string& dataset : datasets) {
      std::vector<SummaryResponse> responses;
      for (const auto& r : sorted)
        if (r.dataset == dataset) responses.push_back(r);
      rows.push_back(rowOf(run, dataset, responses, confidence, resamples));
    }
    if (datasets.size() != 1)  // several prompt sets, or none (a run cancelled before any prompt)
      rows.push_back(rowOf(run, "all", sorted, confidence, resamples));
  }
  return rows;
}

TauComparison pairedDifference(const SummaryRun& run, const SummaryRun& baseline, double confidence, int resamples) {
  // Joined on (prompt, repeat); a prompt's repeats averaged on both sides, so the paired
  // bootstrap resamples prompts.
  const auto base = responseTaus(baseline);
  std::map<std::int64_t, std::pair<std::vector<double>, std::vector<double>>> byPrompt;
  for (const auto& [key, tau] : responseTaus(run))
    if (const auto it = base.find(key); it != base.end()) {
      byPrompt[key.first].first.push_back(it->second);
      byPrompt[key.first].second.push_back(tau);
    }
  std::vector<double> a, b;
  for (const auto& [prompt, pair] : byPrompt) {
    a.push_back(meanOf(pair.first));
    b.push_back(meanOf(pair.second));
  }
  return TauComparison{run.mode, run.drafter, run.variant, baseline.drafter, baseline.variant,
                       static_cast<std::int64_t>(a.size()), bootstrapPairedDifference(a, b, confidence, resamples),
                       run.runIds.empty() ? 0 : run.runIds.front(), baseline.runIds.empty() ? 0 : baseline.runIds.front()};
}

std::vector<TauComparison> pairedComparisons(std::span<const SummaryRun> runs, double confidence, int resamples) {
  auto compare = [&](const SummaryRun& run, const SummaryRun& baseline) {
    return pairedDifference(run, baseline, confidence, resamples);
  };
  std::vector<TauComparison> out;
  for (const SummaryRun& run : runs) {  // against the first drafter with this mode and variant
    const auto baseline = std::ranges::find_if(
        runs, [&](const SummaryRun& b) { return b.mode == run.mode && b.variant == run.variant; });
    if (baseline->drafter != run.drafter) out.push_back(compare(run, *baseline));
  }
  for (const SummaryRun& run : runs) {  // against the same drafter under the reference mask
    if (run.variant == "reference") continue;
    const auto baseline = std::ranges::find_if(runs, [&](const SummaryRun& b) {
      return b.drafter == run.drafter && b.mode == run.mode && b.variant == "reference";
    });
    if (baseline != runs.end()) out.push_back(compare(run, *baseline));
  }
  return out;
}

nlohmann::json comparisonsJson(std::span<const TauComparison> comparisons) {
  nlohmann::json out = nlohmann::json::array();
  for (const TauComparison& c : comparisons) out.push_back(toJson(c));
  return out;
}

nlohmann::json summaryJson(std::span<const SummaryRow> rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const SummaryRow& r : rows) out.push_back(toJson(r));
  return out;
}

}  // namespace dfi::analysis
