#pragma once
// A drafter's training run seen through its checkpoints: tau of each checkpoint by training step
// (the summary's interval), the acceptance the trainer logged at that step in tau's convention
// (dfi/analysis/training_log.h) and the gap between them, the analytic accept_len at T=1 beside
// the one speculators logs, per-slot acceptance by step, and the best checkpoint with its paired
// difference to the last one. What a trainer reads to see where training and serving part.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/analysis/run_summary.h"
#include "dfi/analysis/training_log.h"

namespace dfi::analysis {

// One checkpoint of the series as the session recorded it.
struct SeriesMember {
  std::string drafter;  // the summary's label (SummaryRun::drafter)
  std::int64_t step = 0;
  int blockSize = 0;
  // Its teacher-forced run's analytic accept_len at T=1 (reference mask), where the run recorded
  // slot_overlap (PositionMetrics::analyticAcceptLength).
  std::optional<Interval> analytic;
};

struct SeriesPoint {
  std::string drafter;
  std::int64_t step = 0;
  std::int64_t prompts = 0;
  Interval tau;
  std::optional<double> logged;         // the trainer's acceptance at loggedStep, in tau's convention
  std::optional<std::int64_t> loggedStep;
  std::vector<double> slotAcceptance;   // [i]: fraction of steps whose draft slot i + 1 was accepted
  // The same at T=1: the checkpoint's analytic accept_len (SeriesMember::analytic) against the
  // trainer's own (speculators' accept_len), at loggedAnalyticStep.
  std::optional<Interval> analytic;
  std::optional<double> loggedAnalytic;
  std::optional<std::int64_t> loggedAnalyticStep;
  std::optional<double> gap() const { return logged ? std::optional(tau.estimate - *logged) : std::nullopt; }
  std::optional<double> analyticGap() const {
    return analytic && loggedAnalytic ? std::optional(analytic->estimate - *loggedAnalytic) : std::nullopt;
  }
};

struct SeriesSummary {
  std::string mode, variant;                 // the runs compared (live and reference when recorded)
  std::optional<LoggedAcceptance> logTag;    // absent: no training log, or none of its tags known
  std::optional<LoggedAcceptance> analyticLogTag;  // speculators' accept_len, when the log has one
  std::vector<SeriesPoint> points;           // ascending step
  std::size_t best = 0;                      // index of the highest tau
  std::optional<TauComparison> bestMinusLast;  // paired, when the best is not the last
};

// `members` name the checkpoints (any order); their runs in `runs` are matched by drafter label,
// mode and variant (`mode` empty: live if recorded, else teacher-forced; variant reference).
// A logged value is matched to a checkpoint within `logWindow` steps. Throws dfi::UsageError when
// no member has a run in that mode.
SeriesSummary summarizeSeries(std::span<const SummaryRun> runs, std::span<const SeriesMember> members,
                              const TrainingLog* log, const std::string& mode = {}, std::int64_t logWindow = -1);

std::string formatSeries(const SeriesSummary& series);
nlohmann::json seriesJson(const SeriesSummary& series);

}  // namespace dfi::analysis
