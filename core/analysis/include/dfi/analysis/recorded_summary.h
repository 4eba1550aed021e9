#pragma once
// The summary of what a session recorded, read back from its runs: the one run summary's
// input for `dflash-eval summary` (after Ctrl-C too, and on merged shards) and for the GUI's
// Overview alike, so both show the same rows. Recorded runs that are parts of one evaluation
// (same settings but the shard, same drafter, mode and mask variant: the shards of a merged
// session, the sampled repeats of one) are joined into one SummaryRun; a diagnosis's runs are
// left out (they are read by their diagnosis, readDiagnoses); an imported run stays a run of
// its own. Labels as the live summary's: the drafter's shortest distinct path tail,
// "ddtree-N", and the prompts file's name for prompts without a dataset.

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "dfi/analysis/position_metrics.h"
#include "dfi/analysis/run_summary.h"
#include "dfi/session/records.h"

namespace dfi::analysis {

// What the summary reads of a session, whatever holds it (a Reader, the GUI's source).
struct RecordedRuns {
  std::span<const session::RunRecord> runs;
  std::function<std::vector<session::PromptRecord>(session::RunId)> prompts;
  std::function<void(session::RunId, const std::function<void(const session::StepSummary&)>&)> forEachStepSummary;
  std::string file;  // named in errors
};

// The summary's label of each drafter path among `runs` (drafterLabels over their distinct paths,
// in recorded order): what SummaryRun::drafter holds for a run of that drafter.
std::map<std::string, std::string> drafterLabelsByPath(std::span<const session::RunRecord> runs);

// One SummaryRun per evaluation, in the order its first run was recorded; each lists the
// recorded runs it joins (SummaryRun::runIds).
std::vector<SummaryRun> recordedSummaryRuns(const RecordedRuns& recorded);
std::vector<SummaryRun> recordedSummaryRuns(const std::string& sessionPath);

// Acceptance by position of every recorded run (a shard is a run of its own here), per step
// mode, with the run's name: the summary's per-run sections.
struct NamedPositionMetrics {
  std::string run;
  PositionMetrics metrics;
};
std::vector<NamedPositionMetrics> recordedPositionMetrics(const std::string& sessionPath);

}  // namespace dfi::analysis
