// dflash-eval summary: the end-of-run table of a recorded session, read back from the file, so
// the shards of a cluster run get one table (tau with 95% bootstrap intervals over all their
// prompts) once `merge` has joined them.

#include <cstdio>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dfi/analysis/position_report.h"
#include "dfi/analysis/recorded_summary.h"
#include "diagnosis_report.h"
#include "dfi/analysis/summary_table.h"

namespace dfi::eval {
namespace {

// The best hypotheses of each diagnosis, as the demo prints them; `diagnose` prints every one.
constexpr int kDiagnosisRowsShown = 5;

}  // namespace

void registerSummaryCommand(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "summary", "Tau per drafter, mode, mask variant and prompt set of a session (shards of one run joined)");
  auto session = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub->add_option("session", *session, "Session file (.dfi), e.g. the output of merge")->required()->check(CLI::ExistingFile);
  sub->add_flag("--json", *json, "One JSON object {\"rows\": [...], \"comparisons\": [...], \"positions\": [...], \"diagnoses\": [...]} instead of the table");
  setAction(*sub, [session, json] {
    const auto runs = analysis::recordedSummaryRuns(*session);
    const auto rows = analysis::summarizeRuns(runs);
    const auto comparisons = analysis::pairedComparisons(runs);
    const auto positions = analysis::recordedPositionMetrics(*session);
    const auto diagnoses = readSessionDiagnoses(*session);
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
      std::printf("%s\n", nlohmann::json{{"rows", analysis::summaryJson(rows)}, {"comparisons", analysis::comparisonsJson(comparisons)},
                                         {"positions", byPosition}, {"diagnoses", diagnosed}}
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                              .c_str());
    } else {
      std::string sections;
      for (const auto& p : positions) sections += "\n" + analysis::formatPositionSection(p.metrics, p.run);
      if (!positions.empty()) sections += "\n" + analysis::positionSectionsLegend();
      for (const auto& d : diagnoses) sections += "\n" + formatDiagnosis(d, kDiagnosisRowsShown);
      std::fputs((analysis::formatSummaryTable(rows) + analysis::formatComparisons(comparisons) + sections).c_str(), stdout);
    }
    return 0;
  });
}

}  // namespace dfi::eval
