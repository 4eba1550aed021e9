#include "session_diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cancel_on_interrupt.h"
#include "diagnosis_report.h"
#include "dfi/base/error.h"
#include "dfi/session/reader.h"

namespace dfi::eval {
namespace {

session::RunId lastRunId(const std::string& sessionPath, session::OpenMode mode) {
  if (mode != session::OpenMode::Append || !std::filesystem::exists(sessionPath)) return 0;
  session::RunId last = 0;
  for (const session::RunRecord& run : session::Reader(sessionPath).runs()) last = std::max(last, run.runId);
  return last;
}

// What the battery cost against one teacher-forced pass, from the baseline's timings.
void printCost(const session::RunRecord& baseline) {
  const auto t = nlohmann::json::parse(baseline.timingsJson, nullptr, false);
  if (t.is_discarded() || !t.contains("teacher_forced_seconds")) return;  // cancelled before the end
  const double pass = t["teacher_forced_seconds"].get<double>();
  const double battery = t["drafter_side_seconds"].get<double>() + t["target_side_seconds"].get<double>();
  std::fprintf(stderr, "cost: %s: the battery took %.1f s, %.1f x one teacher-forced pass (%.2f s over %d prompts)\n",
               baseline.name.c_str(), battery, pass > 0 ? battery / pass : 0.0, pass, t["prompts"].get<int>());
}

}  // namespace

int diagnoseIntoSession(const engine::DiagnosisSettings& settings, const std::string& sessionPath,
                        const DiagnosisOutput& output) {
  const session::RunId before = lastRunId(sessionPath, output.mode);
  ProgressReporter progress(output.progress);
  session::Writer writer(sessionPath, {.mode = output.mode});
  engine::SessionSink sink(writer);
  CancellationToken cancel;
  const CancelOnInterrupt interrupt(cancel);
  int code = 0;
  try {
    engine::runDiagnosis(settings, sink, [&](const engine::EvaluationProgress& p) { progress.report(p); }, cancel);
  } catch (const CancelledError& e) {
    progress.finish();
    std::fprintf(stderr, "dflash-eval: %s\n", e.what());
    code = e.exitCode();
  } catch (const Error&) {
    progress.finish();
    writer.close();  // keeps what was recorded
    if (before == 0 && session::Reader(sessionPath).runs().empty()) std::filesystem::remove(sessionPath);
    throw;
  }
  progress.finish();
  writer.close();

  std::vector<analysis::Diagnosis> diagnoses = readSessionDiagnoses(sessionPath);
  std::erase_if(diagnoses, [&](const analysis::Diagnosis& d) { return d.baseline <= before; });
  if (output.json) {
    std::cout << diagnosesJson(diagnoses) << std::endl;
  } else {
    for (const analysis::Diagnosis& d : diagnoses) std::cout << formatDiagnosis(d, output.rows) << "\n";
    std::cout << "session: " << sessionPath << std::endl;
  }
  session::Reader reader(sessionPath);
  for (const analysis::Diagnosis& d : diagnoses)
    if (const auto run = reader.run(d.baseline)) printCost(*run);
  return code;
}

}  // namespace dfi::eval
