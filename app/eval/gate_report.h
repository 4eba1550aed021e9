#pragma once
// The pass-bar check of a session (dfi/analysis/pass_bars.h) as `gate` and `run --require`
// print it: the bars recorded with its runs and those given now, each with its interval, and
// the exit code a training pipeline's CI stops on.

#include <string>
#include <vector>

namespace dfi::eval {

// A session that misses one of its pass bars (or cannot measure it) ends the command with this
// code: not an error of the input (1-5), not a cancel (130).
inline constexpr int kGateFailedExitCode = 6;

struct GateOptions {
  std::vector<std::string> bars;  // besides those recorded in the session
  bool strict = false;            // the whole 95% interval must meet each bar
  bool json = false;              // one JSON object on stdout instead of the lines
};

// Prints the result on stdout; returns 0 or kGateFailedExitCode. Throws dfi::UsageError when
// there is no bar at all or one is malformed.
int gateSession(const std::string& sessionPath, const GateOptions& options);

}  // namespace dfi::eval
