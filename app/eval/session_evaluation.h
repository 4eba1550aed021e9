#pragma once
// Runs an evaluation into a session file from the command line (`run`, `demo`): progress
// with ETA on stderr, Ctrl-C stops after the current prompt keeping a valid file, and the
// tau table on stdout at the end.

#include <string>

#include "dfi/engine/evaluation.h"

namespace dfi::eval {

int evaluateIntoSession(const engine::EvaluationSettings& settings, const std::string& sessionPath,
                        bool overwrite);

}  // namespace dfi::eval
