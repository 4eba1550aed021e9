#pragma once
// Runs a diagnosis into a session file from the command line (`diagnose`, `demo`): progress,
// Ctrl-C keeps every hypothesis measured so far, then each drafter's diagnosis printed (or as
// JSON) and what the battery cost against one teacher-forced pass.

#include <string>

#include "dfi/engine/diagnosis.h"
#include "dfi/session/writer.h"
#include "progress_report.h"

namespace dfi::eval {

struct DiagnosisOutput {
  session::OpenMode mode = session::OpenMode::CreateNew;
  ProgressStyle progress = ProgressStyle::Auto;
  bool json = false;
  int rows = 0;  // hypotheses printed per diagnosis, best first; 0: all
};

// Returns the exit code: 0, or the cancellation's.
int diagnoseIntoSession(const engine::DiagnosisSettings& settings, const std::string& sessionPath,
                        const DiagnosisOutput& output);

}  // namespace dfi::eval
