#pragma once
// The summary of what a session recorded, read back from the file: after Ctrl-C (the engine
// returns nothing then), and for `dflash-eval summary` on a merged session, where the shards of
// one evaluation (same settings but the shard, same drafter) are joined into one row set.

#include <string>
#include <vector>

#include "dfi/analysis/position_metrics.h"
#include "summary_table.h"

namespace dfi::eval {

// One analysis::SummaryRun per (settings without the shard, drafter), in the order runs were recorded.
// A diagnosis's runs are left out: they are read by their diagnosis (readSessionDiagnoses).
// Labels as the live summary's: the drafter's shortest distinct path tail, "ddtree-N", and the
// prompts file's name for prompts without a dataset.
std::vector<analysis::SummaryRun> recordedSummaryRuns(const std::string& sessionPath);

// Acceptance by position of every recorded run (a shard is a run of its own here), per step
// mode, with the run's name: the summary's per-run sections.
struct NamedPositionMetrics {
  std::string run;
  analysis::PositionMetrics metrics;
};
std::vector<NamedPositionMetrics> recordedPositionMetrics(const std::string& sessionPath);

}  // namespace dfi::eval
