#pragma once
// The one run summary: tau per drafter, mode (live, teacher-forced, DDTree-N),
// mask variant and prompt set, with a 95% percentile-bootstrap interval over responses (the
// prompts are the sample; another prompt set of the same kind would move tau by about that
// much). A sampled evaluation repeated N times also gets the interval over its repeats (what
// another seed would move tau by); its responses are paired by (prompt, repeat), whose seeds
// are shared across drafters. Torch-free: it works on acceptance lengths only.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/statistics.h"

namespace dfi::analysis {

struct SummaryResponse {
  std::int64_t promptId = 0;
  std::string dataset;  // the prompt set: the prompt's "dataset", or the prompts file's name
  ResponseAcceptance acceptance;
  int sample = 0;  // the repeat of a sampled evaluation
};

struct SummaryRun {
  std::string drafter;  // a short label (the checkpoint directory's name)
  std::string mode;     // "live", "teacher-forced", "ddtree-8"
  std::string variant;  // mask variant
  std::vector<SummaryResponse> responses;
  // Live runs: how the last steps were drafted and counted (EnumNames<settings::StepCounting>).
  std::string stepCounting;
  std::string sampling = "greedy";  // the live loop's (engine::samplingLabel), for every mode
  std::vector<std::int64_t> runIds;  // recorded runs it joins (shards, sampled repeats); none while running
};

struct SummaryRow {
  std::string drafter, mode, variant;
  std::string dataset;  // "all" for the union when a run covers several prompt sets
  std::string sampling;         // SummaryRun::sampling
  std::int64_t responses = 0;  // with at least one step, over every repeat
  std::int64_t steps = 0;
  // tau in the z-lab convention (mean of per-response means) with its bootstrap interval.
  Interval tau;
  int repeats = 1;                                // sampled repeats of each prompt
  std::optional<Interval> tauOverRepeats;  // repeats > 1: Student-t over the repeats' tau
  std::optional<double> tauSglang;  // live only
  // vLLM's convention (pooled over steps) and its 95% bootstrap interval over prompts (a ratio
  // of pooled sums).
  Interval tauVllm;
  std::string stepCounting;  // live only: SummaryRun::stepCounting
  std::vector<std::int64_t> runIds;  // SummaryRun::runIds: the recorded runs it summarizes

  bool operator==(const SummaryRow&) const = default;
};

// The one rule for sampled repeats, for every summary (CLI, GUI, diagnosis): a prompt's tau is
// the mean of its responses' taus (one per repeat; they share the prompt), so a bootstrap over
// these resamples prompts and their mean is tau in the z-lab convention. Prompts ascending;
// responses without a step are left out.
struct PromptTaus {
  std::vector<std::int64_t> prompts;
  std::vector<double> taus;
};
PromptTaus promptTaus(std::span<const SummaryResponse> responses);

// The interval of vLLM's tau (accepted tokens over steps, pooled): a ratio of sums, so the
// bootstrap resamples prompts with their accepted lengths and steps (a prompt's repeats pooled
// with it).
Interval tauVllmInterval(std::span<const SummaryResponse> responses, double confidence = 0.95,
                         int resamples = kBootstrapResamples);

// Short, distinct labels for drafter directories: the directory's name, or as many trailing
// path components as it takes to tell two apart (exp1/final and exp2/final, not final twice).
std::vector<std::string> drafterLabels(const std::vector<std::string>& paths);

// One row per (run, prompt set), plus an "all" row per run with several prompt sets. The
// interval resamples prompts (`resamples` times, fixed seed: the same run prints the same
// table); a prompt's repeats are averaged first.
std::vector<SummaryRow> summarizeRuns(std::span<const SummaryRun> runs, double confidence = 0.95,
                                  int resamples = kBootstrapResamples);

// Paired comparisons of per-response tau on the same prompts and repeats (the paired bootstrap
// over prompts of the difference says whether it is beyond noise), of two kinds:
// - each other drafter against the first one, same mode and mask variant;
// - each drafter under every other mask variant against itself under `reference`, same mode:
//   what a train/eval mask mismatch costs (or fakes).
struct TauComparison {
  std::string mode;
  std::string drafter, variant;                  // compared ...
  std::string baselineDrafter, baselineVariant;  // ... against
  std::int64_t prompts = 0;        // responses with steps under both
  Interval difference;   // tau(compared) - tau(baseline)
  std::int64_t run = 0, baselineRun = 0;  // the first recorded run of each (SummaryRun::runIds); 0: none
  bool acrossVariants() const { return variant != baselineVariant; }
  bool operator==(const TauComparison&) const = default;
};
// tau(run) - tau(baseline) on the prompts and repeats both have, as pairedComparisons computes it.
TauComparison pairedDifference(const SummaryRun& run, const SummaryRun& baseline, double confidence = 0.95,
                               int resamples = kBootstrapResamples);
std::vector<TauComparison> pairedComparisons(std::span<const SummaryRun> runs, double confidence = 0.95,
                                             int resamples = kBootstrapResamples);

// As `summary --json` writes them (their field tables: summary_fields.h).
nlohmann::json summaryJson(std::span<const SummaryRow> rows);
nlohmann::json comparisonsJson(std::span<const TauComparison> comparisons);

}  // namespace dfi::analysis
