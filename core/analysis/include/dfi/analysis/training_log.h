#pragma once
// A drafter training run's own log, read beside its checkpoints: TensorBoard event files (read
// natively: TFRecord framing with its masked CRC-32C, the Event and Summary protobuf messages;
// what torch.utils.tensorboard's SummaryWriter writes for SpecForge's and speculators'
// trackers), JSON lines (one object a line: "step" or "global_step" and numbers, nested objects
// joined with "/") and Hugging Face Trainer's trainer_state.json (its log_history).
//
// The acceptance the trainer logged is found by its tag and its convention: speculators' eal
// counts the bonus token (vLLM's convention, tau's), SpecForge's accept_len and
// simulated_acc_len count accepted drafts only, so tau = logged + 1 there; speculators'
// accept_len is another figure (at T=1, from 1 - TV), compared with its own counterpart.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dfi::analysis {

struct LoggedPoint {
  std::int64_t step = 0;
  double value = 0;
  double wallTime = 0;  // seconds since the epoch; 0 where the format has none
};

struct TrainingLog {
  std::map<std::string, std::vector<LoggedPoint>> scalars;  // by tag, in step order
  std::vector<std::filesystem::path> files;                  // what was read
};

// One file of any of the three kinds, or every such file under a folder (recursively: a
// trainer writes runs/<date>/events.out.tfevents.*). Throws dfi::FormatError naming the file
// and the byte offset (or line) for a corrupt record; a TensorBoard file whose last record is
// cut short (a trainer still writing) keeps the records before it.
TrainingLog readTrainingLog(const std::filesystem::path& fileOrFolder);

// The logged acceptance comparable with tau: the first known tag present, and the offset that
// turns its value into tau's convention.
struct LoggedAcceptance {
  std::string tag;
  double toTau = 0;        // tau = value + toTau
  std::string convention;  // in words, for the summary
};
std::optional<LoggedAcceptance> loggedAcceptance(const TrainingLog& log);

// speculators' analytic accept_len (per block 1 + the running products of 1 - TV at T=1, the
// bonus counted), which its trainer logs beside eal: the figure the evaluation's analytic
// accept_len (PositionMetrics::analyticAcceptLength) measures, not tau. Only in a speculators log
// (one with an eal): SpecForge's accept_len, under the same name, counts greedy accepted drafts.
std::optional<LoggedAcceptance> loggedAnalyticAcceptance(const TrainingLog& log);

// The value of `tag` nearest `step` (the earlier of two equally near), if one lies within
// `window` steps: a trainer logs every few steps and saves a checkpoint at its own cadence.
std::optional<LoggedPoint> loggedAt(const TrainingLog& log, const std::string& tag, std::int64_t step,
                                    std::int64_t window);

}  // namespace dfi::analysis
