#pragma once
// Pass bars: the conditions a training pipeline's CI puts on an evaluation, so that a
// regressed checkpoint stops the job (`dflash-eval gate`, `run --require`). A bar is one line:
//
//   tau(SELECTOR) OP VALUE              tau of one run, z-lab's convention (mean of per-response means)
//   tau_vllm(SELECTOR) OP VALUE         tau in vLLM's convention (pooled over steps)
//   paired(SELECTOR - SELECTOR) OP VALUE  the paired difference tau(a) - tau(b) on the prompts both have
//
// OP is one of >= > <= <. A SELECTOR is a drafter's label as the summary prints it, then, comma
// separated and in any order, what tells its runs apart: the mode (live, teacher-forced,
// ddtree-8), the mask variant, the sampling label or a prompt set (dataset). Left out, the mode
// is live and the variant reference where the drafter has such a run; a selector that still
// names several runs, or none, is an error that lists what there is.
//
// Each value comes with the summary's 95% bootstrap interval (the same numbers `summary` prints).
// A bar passes when its estimate meets it; with `strict`, only when the whole interval does
// (the bar holds beyond prompt noise). A bar whose interval straddles its value is marked so
// either way: another prompt set could flip it.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/analysis/run_summary.h"
#include "dfi/analysis/statistics.h"

namespace dfi::analysis {

struct RunSelector {
  std::string drafter;
  std::vector<std::string> qualifiers;  // mode, mask variant, sampling or dataset, in any order
  bool operator==(const RunSelector&) const = default;
};

enum class BarQuantity { Tau, TauVllm, Paired };
enum class BarComparison { AtLeast, Above, AtMost, Below };

struct PassBar {
  std::string text;  // as written, trimmed
  BarQuantity quantity = BarQuantity::Tau;
  RunSelector run;                     // the measured run; for Paired the minuend
  std::optional<RunSelector> baseline;  // Paired only: the subtrahend
  BarComparison comparison = BarComparison::AtLeast;
  double value = 0;
  bool operator==(const PassBar&) const = default;
};

// Throws dfi::UsageError quoting the bar and saying what is malformed.
PassBar parsePassBar(std::string_view text);

struct BarResult {
  PassBar bar;
  bool passed = false;
  bool withinNoise = false;       // the interval contains the bar's value
  Interval measured;              // the estimate and its 95% interval
  std::int64_t prompts = 0;       // prompts behind the interval
  std::string run, baseline;      // the runs selected, as "drafter / mode / variant"
  std::string problem;            // non-empty: the bar could not be measured (fails)
};

// Every bar against the session's summary runs (recordedSummaryRuns); never throws for a bar
// that selects nothing: its result says so and fails.
std::vector<BarResult> checkPassBars(std::span<const PassBar> bars, std::span<const SummaryRun> runs, bool strict);

// The bars recorded with a session's runs (RunSettings::passBars), each once, in recorded order.
std::vector<std::string> recordedPassBars(const std::string& sessionPath);

// One line per bar (PASS/FAIL, the value with its interval, the runs) and a closing verdict.
std::string formatBarResults(std::span<const BarResult> results, bool strict);
nlohmann::json barResultsJson(std::span<const BarResult> results, bool strict);

}  // namespace dfi::analysis
