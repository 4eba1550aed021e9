#pragma once
// A diagnosis as `diagnose` and `demo` print it: the lint findings first, then the hypotheses
// ranked by what each would be worth (the paired tau difference and its interval), candidate
// causes marked, the ones not measured or not applicable listed with why. Torch-free.

#include <string>
#include <vector>

#include "dfi/analysis/diagnosis.h"

namespace dfi::eval {

// `rows` > 0 prints only the best `rows` hypotheses (the demo), 0 every one.
std::string formatDiagnosis(const analysis::Diagnosis& diagnosis, int rows = 0);

// The diagnoses of a session file, read back through the one analysis (analysis/diagnosis.h).
std::vector<analysis::Diagnosis> readSessionDiagnoses(const std::string& sessionPath);

// "diagnose --json": one diagnosis's object, or an array of them for several drafters.
std::string diagnosesJson(const std::vector<analysis::Diagnosis>& diagnoses);
// One row per hypothesis of every diagnosis: drafter, baseline run, name, applicable, delta_tau,
// ci_low, ci_high, tau, candidate_cause, reason (`export --what diagnosis --format csv`).
std::string diagnosesCsv(const std::vector<analysis::Diagnosis>& diagnoses);

}  // namespace dfi::eval
