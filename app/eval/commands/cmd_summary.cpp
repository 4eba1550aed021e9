// dflash-eval summary: the end-of-run table of a recorded session, read back from the file, so
// the shards of a cluster run get one table (tau with 95% bootstrap intervals over all their
// prompts) once `merge` has joined them.

#include <cstdio>
#include <fstream>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dfi/analysis/budget_what_if.h"
#include "dfi/analysis/position_report.h"
#include "dfi/analysis/recorded_summary.h"
#include "dfi/analysis/series_summary.h"
#include "dfi/analysis/summary_table.h"
#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "series_report.h"
#include "diagnosis_report.h"

namespace dfi::eval {
namespace {

// The best hypotheses of each diagnosis, as the demo prints them; `diagnose` prints every one.
constexpr int kDiagnosisRowsShown = 5;

std::optional<analysis::CostModel> costModelFile(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw IoError("cannot read the cost model", {.file = path});
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (json.is_discarded()) throw FormatError("the cost model is not JSON", {.file = path});
  return analysis::parseCostModel(json, path);
}

// The series' training log: the one named, else whatever the training folder holds (a folder
// without a log, or with one this reader refuses, leaves the series without logged values).
analysis::SeriesSummary checkpointSeries(const std::string& session, const std::string& folder,
                                         const std::string& logPath, std::span<const analysis::SummaryRun> runs) {
  std::optional<analysis::TrainingLog> log;
  if (!logPath.empty()) {
    log = analysis::readTrainingLog(logPath);
  } else {
    try {
      log = analysis::readTrainingLog(folder);
    } catch (const Error& e) {
      logText("eval", LogLevel::Warn, std::string("--series: the training folder's log is not read: ") + e.what());
    }
  }
  const auto members = seriesMembers(session, folder);
  return analysis::summarizeSeries(runs, members, log ? &*log : nullptr);
}

}  // namespace

void registerSummaryCommand(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "summary", "Tau per drafter, mode, mask variant and prompt set of a session (shards of one run joined)");
  auto session = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto whatIf = std::make_shared<bool>(false);
  auto cost = std::make_shared<std::string>();
  sub->add_option("session", *session, "Session file (.dfi), e.g. the output of merge")->required()->check(CLI::ExistingFile);
  sub->add_flag("--json", *json, "One JSON object {\"rows\": [...], \"comparisons\": [...], \"positions\": [...], \"diagnoses\": [...]} instead of the table");
  sub->add_flag("--what-if", *whatIf,
                 "Also what each teacher-forced run says about other verify lengths and DDTree budgets: tau with "
                 "intervals, and the expected speedup with a cost model (JSON key \"what_if\")");
  sub->add_option("--cost", *cost,
                  "Cost model for --what-if, JSON {\"target_ms\": {\"1\": 21.0, \"16\": 24.5}, \"drafter_ms\": 3.1}: "
                  "the target's forward per verified tokens and the drafter's block, e.g. measured on the serving GPU "
                  "(default: the one run --calibrate-cost recorded in the session)")
      ->check(CLI::ExistingFile);
  auto series = std::make_shared<std::string>();
  auto trainingLog = std::make_shared<std::string>();
  sub->add_option("--series", *series,
                  "A training run's output folder (as run --drafter-series takes it): tau of each of its checkpoints "
                  "by step beside the acceptance the trainer logged, the gap, per-slot acceptance by step and the best "
                  "checkpoint against the last (JSON key \"series\")")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--training-log", *trainingLog,
                  "The trainer's log for --series: a TensorBoard event file, JSON lines or trainer_state.json, or a "
                  "folder of them (default: every such file under the --series folder)")
      ->check(CLI::ExistingPath);
  setAction(*sub, [session, json, whatIf, cost, series, trainingLog] {
    const auto runs = analysis::recordedSummaryRuns(*session);
    const auto rows = analysis::summarizeRuns(runs);
    const auto comparisons = analysis::pairedComparisons(runs);
    const auto positions = analysis::recordedPositionMetrics(*session);
    const auto diagnoses = readSessionDiagnoses(*session);
    const std::optional<analysis::SeriesSummary> seriesSummary =
        series->empty() ? std::nullopt : std::optional(checkpointSeries(*session, *series, *trainingLog, runs));
    const auto whatIfs = *whatIf ? analysis::recordedWhatIfs(*session, costModelFile(*cost))
                                 : std::vector<analysis::RecordedWhatIfs>{};
    if (*json) {
      nlohmann::json byPosition = nlohmann::json::array();
      for (const auto& p : positions) {
        byPosition.push_back(analysis::positionMetricsJson(p.metrics));
        byPosition.back()["run"] = p.run;
      }
      nlohmann::json diagnosed = nlohmann::json::array();
      for (const auto& d : diagnoses) {
        diagnosed.push_back(nlohmann::json::parse(analysis::diagnosisJson(d)));
        diagnosed.back()["baseline_run"] = d.baseline;
        diagnosed.back()["drafter"] = d.drafter;
      }
      nlohmann::json out{{"rows", analysis::summaryJson(rows)}, {"comparisons", analysis::comparisonsJson(comparisons)},
                         {"positions", byPosition}, {"diagnoses", diagnosed}};
      if (*whatIf) {
        out["what_if"] = nlohmann::json::array();
        for (const auto& w : whatIfs)
          out["what_if"].push_back({{"run", w.run},
                                    {"run_ids", w.runIds},
                                    {"cost", w.cost ? analysis::costModelJson(*w.cost) : nlohmann::json(nullptr)},
                                    {"rows", analysis::whatIfJson(w.rows)}});
      }
      if (seriesSummary) out["series"] = analysis::seriesJson(*seriesSummary);
      std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      std::string sections;
      for (const auto& p : positions) sections += "\n" + analysis::formatPositionSection(p.metrics, p.run);
      if (!positions.empty()) sections += "\n" + analysis::positionSectionsLegend();
      for (const auto& d : diagnoses) sections += "\n" + formatDiagnosis(d, kDiagnosisRowsShown);
      for (const auto& w : whatIfs) sections += analysis::formatWhatIfs(w.rows, w.run, w.cost);
      if (seriesSummary) sections += analysis::formatSeries(*seriesSummary);
      std::fputs((analysis::formatSummaryTable(rows) + analysis::formatComparisons(comparisons) + sections).c_str(), stdout);
    }
    return 0;
  });
}

}  // namespace dfi::eval
