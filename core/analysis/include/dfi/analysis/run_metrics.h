#pragma once
// Acceptance metrics of a recorded run, read from a session file: the three tau conventions per
// prompt and overall and the acceptance-length histogram, as `dflash-eval export --what metrics`
// writes them.

#include <optional>
#include <vector>

#include "dfi/session/reader.h"

namespace dfi::analysis {

struct PromptTau {
  session::PromptId promptId = 0;
  std::int64_t steps = 0;
  double tau = 0;  // mean acceptance length of this response
};

// One per (run, step mode) present: live, teacher-forced and DDTree steps are not averaged together.
struct RunMetrics {
  session::RunId runId = 0;
  session::EvaluationMode mode = session::EvaluationMode::Live;
  std::int64_t steps = 0;
  double tauReference = 0;
  // SGLang's tau divides a request's completion tokens by its verify steps: defined for live
  // runs only (teacher-forced and DDTree steps do not generate a completion).
  std::optional<double> tauSglang;
  double tauVllm = 0;
  std::vector<PromptTau> perPrompt;
  // fraction[L] of steps with acceptance length L, L = 0..blockSize
  std::vector<double> acceptHistogram;
};

// Streams the run's steps once; memory grows with prompts, not steps' contents.
std::vector<RunMetrics> computeRunMetrics(session::Reader& reader, const session::RunRecord& run);

}  // namespace dfi::analysis
