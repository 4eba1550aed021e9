#pragma once
// Runs an evaluation into a session file from the command line (`run`, `demo`): progress
// (progress_report.h), Ctrl-C stops after the current prompt keeping a valid file, and the
// summary table (summary_table.h) at the end: on stdout, or on stderr with `--progress json`,
// whose stdout carries a final {"event":"summary"} line instead.

#include <string>

#include <nlohmann/json.hpp>

#include "dfi/engine/evaluation.h"
#include "dfi/session/writer.h"
#include "progress_report.h"

namespace dfi::eval {

struct SessionReport {
  ProgressStyle progress = ProgressStyle::Auto;
  nlohmann::json context = nlohmann::json::object();  // added to every JSON event (the shard)
};

// `mode`: a new file, an overwritten one, or (watch) runs appended to an existing session.
int evaluateIntoSession(const engine::EvaluationSettings& settings, const std::string& sessionPath,
                        session::OpenMode mode, const SessionReport& report = {});

}  // namespace dfi::eval
