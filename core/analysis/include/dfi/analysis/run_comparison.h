#pragma once
// Two or more runs of one session (drafters, or one drafter under several mask variants) on
// the same prompts, compared as the compare view shows them: tau per run with a bootstrap
// interval over prompts, acceptance-length histograms, per-slot acceptance (survival)
// curves, and for a chosen pair A/B the per-prompt taus side by side, the paired difference,
// and the blocks where B accepted less than A. Blocks are matched on the stable key
// (prompt, anchor position): in teacher-forced runs every block matches; in live runs the
// blocks whose anchors coincide. Plain data: the GUI's compare view draws it, the tests and
// the benchmark check it without a window.

#include <functional>
#include <string>
#include <vector>

#include "dfi/analysis/statistics.h"
#include "dfi/session/records.h"

namespace dfi::analysis {

struct ComparedStep {
  session::PromptId prompt = 0;
  std::int64_t anchor = 0;
  session::StepId step = 0;
  std::int32_t stepIndex = 0;
  std::int32_t acceptLength = 0;
};

// The steps of one run in one step mode (live, teacher-forced and DDTree steps are never
// averaged together), in block order.
struct ComparedSeries {
  session::RunId run = 0;
  session::EvaluationMode mode = session::EvaluationMode::Live;
  std::string label;  // the run's name, with the mode when the run has several
  std::string drafter;
  int blockSize = 0;
  std::vector<ComparedStep> steps;
};

// One recorded run as the compare view shows it: the run summary's figures, computed by the
// same functions under the same rule (summarizeRuns on this run gives the same tau, interval and
// vLLM tau; test_run_comparison holds them equal), plus what only this view draws.
struct SeriesStatistics {
  std::vector<session::PromptId> prompts;  // ascending
  std::vector<double> promptTau;           // mean acceptance length per prompt, same order
  Interval tau;                  // mean of promptTau (z-lab tau) with its interval
  double tauVllm = 0;                      // pooled over steps
  std::int64_t steps = 0;
  std::vector<std::int64_t> histogram;     // [L] = steps with acceptance length L, L = 0..B
  std::vector<double> slotRates;           // [i] = fraction of steps that accepted draft slot i+1
};

struct BlockRegression {
  session::PromptId prompt = 0;
  std::int64_t anchor = 0;
  session::StepId stepA = 0, stepB = 0;
  std::int32_t stepIndexB = 0;
  std::int32_t acceptA = 0, acceptB = 0;
};

struct PairComparison {
  std::vector<session::PromptId> prompts;  // prompts both runs answered, ascending
  std::vector<double> tauA, tauB;          // their taus, same order
  Interval difference;           // paired bootstrap of mean(tauB - tauA)
  std::int64_t matchedBlocks = 0;          // blocks at the same (prompt, anchor) in both
  std::vector<BlockRegression> regressions;  // B < A, the largest drop first
};

// Calls `visit` with every step summary of `run` in write order, as session::Reader and the
// GUI's SessionSource both can.
using StepSummaryScan =
    std::function<void(session::RunId run, const std::function<void(const session::StepSummary&)>& visit)>;

// Reads every run's step summaries (one pass per run). Passes on the scan's dfi::Error.
std::vector<ComparedSeries> loadComparedSeries(const std::vector<session::RunRecord>& runs,
                                               const StepSummaryScan& forEachStepSummary);

// One per series, computed in parallel (each bootstrap is independent and deterministic).
std::vector<SeriesStatistics> summarizeSeries(const std::vector<ComparedSeries>& series,
                                              int resamples = kBootstrapResamples);

PairComparison comparePair(const ComparedSeries& a, const SeriesStatistics& statsA, const ComparedSeries& b,
                           const SeriesStatistics& statsB, int resamples = kBootstrapResamples);

}  // namespace dfi::analysis
