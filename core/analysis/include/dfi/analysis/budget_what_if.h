#pragma once
// What one teacher-forced pass says about serving settings it did not run: the acceptance
// length (tau, z-lab convention, with its bootstrap interval over prompts) for every verify
// length up to the drafted block and for every DDTree budget, and, given what the target and
// the drafter cost on a device, the expected speedup over target-only decoding.
//
// A teacher-forced step drafts a whole block at one anchor and records the target's greedy
// token at every slot, so:
// - verifying only the first v tokens of that block (anchor + v-1 drafts) accepts
//   min(accepted, v-1) drafts: exact for a drafter that drafts the whole block and is verified
//   on its first v tokens. It is no prediction for the drafter *run* at block size v: its
//   later mask slots are gone, and the early slots draft differently. On the demo's good
//   drafter (block 16, anchors every:2) runs at --block-size 4 and 8 measured tau 2.52 and
//   3.63 against 2.99 [2.74, 3.27] and 4.33 [3.69, 5.05] here: measure a block size with
//   `run --block-size`;
// - DDTree-N is the tree the engine's DDTree mode builds from the same per-slot top-k, so each
//   budget's tau is what a DDTree-N run of these steps records.
// Torch-free: the GUI's What-if panel and `summary --what-if` compute the same rows.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/analysis/statistics.h"
#include "dfi/session/records.h"

namespace dfi::analysis {

// What one decoding step costs on a device: the target's forward over n verified tokens
// (measured at a few n, linear between them and beyond the last two), and the drafter's block.
struct CostModel {
  struct Point {
    int tokens = 1;
    double milliseconds = 0;
  };
  std::vector<Point> target;  // ascending tokens, at least one point
  double drafterMilliseconds = 0;
  std::string source;  // where the figures come from: "calibrated on cuda:0 ...", a file's name

  double targetMilliseconds(int tokens) const;
  // Tokens per unit of time against target-only decoding (one token per forward of one token),
  // at acceptance length `tau` with `verifiedTokens` verified per step.
  double speedup(double tau, int verifiedTokens) const;
};

// A cost model written by hand or by `run --calibrate-cost` (costModelJson):
// {"target_ms": {"1": 21.0, "16": 24.5}, "drafter_ms": 3.1, "source": "H200, vLLM 0.11"}.
// Throws dfi::ValidationError naming `file` and the field for anything else.
CostModel parseCostModel(const nlohmann::json& json, const std::string& file);
nlohmann::json costModelJson(const CostModel& cost);

// The run-level statistics `run --calibrate-cost` records: the target's forward time per number
// of verified tokens, and the drafter's time per block.
inline constexpr const char* kCostTokensStatistic = "cost:verified-tokens";
inline constexpr const char* kCostTargetStatistic = "cost:target-forward-ms";
inline constexpr const char* kCostDrafterStatistic = "cost:drafter-block-ms";
std::vector<session::StatisticRecord> costStatistics(const CostModel& cost, session::RunId run);
// nullopt when `statistics` has none of them; `source` names the run.
std::optional<CostModel> costFromStatistics(std::span<const session::StatisticRecord> statistics,
                                            const std::string& source);

// ConfidenceThreshold (DSpark drafters with a confidence head): each step verifies the drafts
// whose predicted prefix survival reaches the threshold (position_metrics.h), so its verified
// tokens vary by step; the speedup then divides the tokens by each step's own cost.
enum class WhatIfKind { VerifyLength, TreeBudget, ConfidenceThreshold };

struct WhatIfRow {
  WhatIfKind kind = WhatIfKind::VerifyLength;
  int value = 0;           // v (anchor + v-1 drafts), the DDTree budget N, or the threshold in %
  int verifiedTokens = 0;  // what the target verifies per step: v, N + 1, or the mean rounded
  double meanVerifiedTokens = 0;  // the same, unrounded
  std::int64_t prompts = 0;
  Interval tau;
  std::optional<Interval> speedup;  // with a cost model: the tau interval's ends mapped through it
  bool best = false;                // the highest expected speedup of all rows (a cost model's)

  std::string label() const;  // "verify 8", "ddtree-32", "confidence 0.5"
  bool operator==(const WhatIfRow&) const = default;
};

struct WhatIfInput {
  std::span<const session::StepRecord> steps;  // one teacher-forced run's steps
  int blockSize = 0;                          // the run's B
  int topK = 0;                               // k of its steps' top-k tables; 0: no DDTree rows
  std::vector<int> treeBudgets;               // DDTree budgets to try
};

// Every verify length 1..B, then each tree budget (when the steps carry top-k), then each
// confidence threshold (when they carry draft_confidence), tau intervals by the summary's
// bootstrap over prompts. Throws dfi::Error for steps of another mode.
std::vector<WhatIfRow> budgetWhatIfs(const WhatIfInput& input, const std::optional<CostModel>& cost,
                                     double confidence = 0.95, int resamples = kBootstrapResamples);

// The default DDTree budgets a what-if tries: powers of two from 2 to 256 the top-k can fill.
std::vector<int> defaultTreeBudgets(int blockSize, int topK);
// The same for a recorded run, and none when its drafter's slots condition on the drafts before
// them (DSpark's Markov head, read from the run's drafter config): per-slot top-k cannot score a
// tree's branches then, as the engine's DDTree mode refuses.
std::vector<int> treeBudgetsFor(const session::RunRecord& run);

// The what-ifs of every teacher-forced evaluation a session recorded (its shards joined, as the
// run summary joins them; a diagnosis's runs left out), under `entered` costs, or else the last
// cost model `run --calibrate-cost` recorded in the session.
struct RecordedWhatIfs {
  std::string run;  // "<drafter> <mask variant>", the summary's labels
  std::vector<session::RunId> runIds;
  std::optional<CostModel> cost;
  std::vector<WhatIfRow> rows;
};
std::vector<RecordedWhatIfs> recordedWhatIfs(const std::string& sessionPath, const std::optional<CostModel>& entered);

// `summary --what-if` as text and JSON.
std::string formatWhatIfs(std::span<const WhatIfRow> rows, const std::string& run,
                          const std::optional<CostModel>& cost);
nlohmann::json whatIfJson(std::span<const WhatIfRow> rows);

}  // namespace dfi::analysis
