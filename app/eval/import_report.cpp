#include "import_report.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/session/reader.h"

namespace dfi::eval {

ImportReport buildImportReport(const std::string& sessionPath, session::RunId referenceRun,
                               session::RunId importedRun, const std::vector<analysis::ResponseTrace>& importedTraces,
                               const std::vector<session::PromptId>& importedPrompts) {
  session::Reader reader(sessionPath);
  ImportReport report;
  report.referenceRun = referenceRun;
  report.importedRun = importedRun;
  std::vector<session::RunRecord> runs;
  for (session::RunId id : {referenceRun, importedRun}) {
    auto run = reader.run(id);
    if (!run) throw ValidationError("run " + std::to_string(id) + " is not in the session", {.file = sessionPath});
    runs.push_back(*run);
  }
  report.origin = runs[1].origin;
  const auto series = analysis::loadComparedSeries(runs, [&](session::RunId run, const auto& visit) {
    reader.forEachStepSummary(run, visit);
  });
  if (series.size() != 2)
    throw ValidationError("the reference and the imported run must each hold live steps", {.file = sessionPath});
  const auto stats = analysis::summarizeSeries(series);
  report.reference = stats[0];
  report.imported = stats[1];
  report.pair = analysis::comparePair(series[0], stats[0], series[1], stats[1]);
  for (std::size_t i = 0; i < importedPrompts.size(); ++i)
    report.responses.push_back(analysis::alignResponse(
        importedPrompts[i], analysis::traceOfSteps(reader.steps(referenceRun, importedPrompts[i])), importedTraces[i]));
  return report;
}

namespace {

std::string optionalText(const auto& value) { return value ? std::to_string(*value) : std::string("-"); }

std::string interval(const analysis::Interval& i) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%.3f [%.3f, %.3f]", i.estimate, i.low, i.high);
  return buffer;
}

template <typename Map>
std::string histogramText(const Map& histogram) {
  std::string out;
  for (const auto& [at, prompts] : histogram) out += (out.empty() ? "" : "  ") + std::to_string(at) + ":" + std::to_string(prompts);
  return out.empty() ? "none" : out;
}

nlohmann::json intervalJson(const analysis::Interval& i) {
  return {{"estimate", i.estimate}, {"low", i.low}, {"high", i.high}};
}

}  // namespace

std::string formatImportReport(const ImportReport& report) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-8s %-13s %-10s %-11s %-15s %s\n", "prompt", "verdict", "first step",
                "first token", "tokens ref/imp", "what it means");
  out += line;
  for (const auto& r : report.responses) {
    const std::string tokens = std::to_string(r.referenceTokens) + "/" + std::to_string(r.importedTokens);
    std::snprintf(line, sizeof line, "%-8lld %-13s %-10s %-11s %-15s %s\n", static_cast<long long>(r.prompt),
                  analysis::verdictName(r.verdict), optionalText(r.firstStep).c_str(),
                  optionalText(r.firstToken).c_str(), tokens.c_str(), r.text().c_str());
    out += line;
  }
  const auto summary = analysis::summarizeAlignment(report.responses);
  out += "\nreference: run " + std::to_string(report.referenceRun) + " (this engine, live greedy): tau " +
         interval(report.reference.tau) + " over " + std::to_string(report.reference.prompts.size()) + " prompts\n";
  out += "imported:  run " + std::to_string(report.importedRun) + " (" + report.origin + "): tau " +
         interval(report.imported.tau) + " over " + std::to_string(report.imported.prompts.size()) + " prompts\n";
  out += "paired difference imported - reference over " + std::to_string(report.pair.prompts.size()) +
         " prompts: " + interval(report.pair.difference) + " (z-lab tau: mean of per-prompt mean acceptance length)\n";
  out += "verdicts: " + std::to_string(summary.identical) + " identical, " + std::to_string(summary.drafterSide) +
         " drafter-side, " + std::to_string(summary.targetSide) + " target-side of " + std::to_string(summary.prompts) +
         " prompts\n";
  out += "first divergent step (step:prompts): " + histogramText(summary.firstStepHistogram) + "\n";
  out += "first divergent token (token:prompts): " + histogramText(summary.firstTokenHistogram) + "\n";
  if (!report.ignoredFields.empty()) {
    out += "fields not read:";
    for (const auto& f : report.ignoredFields) out += " " + f;
    out += "\n";
  }
  return out;
}

nlohmann::json importReportJson(const ImportReport& report) {
  nlohmann::json prompts = nlohmann::json::array();
  for (const auto& r : report.responses) {
    nlohmann::json p{{"prompt_id", r.prompt},
                     {"verdict", analysis::verdictName(r.verdict)},
                     {"text", r.text()},
                     {"acceptance_differs", r.acceptanceDiffers},
                     {"reference_tokens", r.referenceTokens},
                     {"imported_tokens", r.importedTokens},
                     {"reference_steps", r.referenceSteps},
                     {"imported_steps", r.importedSteps}};
    p["first_step"] = r.firstStep ? nlohmann::json(*r.firstStep) : nlohmann::json();
    p["first_token"] = r.firstToken ? nlohmann::json(*r.firstToken) : nlohmann::json();
    p["lossless"] = r.lossless ? nlohmann::json(*r.lossless) : nlohmann::json();
    prompts.push_back(std::move(p));
  }
  const auto summary = analysis::summarizeAlignment(report.responses);
  nlohmann::json steps = nlohmann::json::object(), tokens = nlohmann::json::object();
  for (const auto& [at, n] : summary.firstStepHistogram) steps[std::to_string(at)] = n;
  for (const auto& [at, n] : summary.firstTokenHistogram) tokens[std::to_string(at)] = n;
  return {{"reference_run", report.referenceRun},
          {"imported_run", report.importedRun},
          {"origin", report.origin},
          {"tau_reference", intervalJson(report.reference.tau)},
          {"tau_imported", intervalJson(report.imported.tau)},
          {"paired_prompts", report.pair.prompts.size()},
          {"tau_difference", intervalJson(report.pair.difference)},
          {"verdicts",
           {{"identical", summary.identical}, {"drafter-side", summary.drafterSide}, {"target-side", summary.targetSide}}},
          {"diverging_share", summary.prompts ? double(summary.drafterSide + summary.targetSide) / summary.prompts : 0.0},
          {"first_step_histogram", steps},
          {"first_token_histogram", tokens},
          {"ignored_fields", report.ignoredFields},
          {"prompts", prompts}};
}

}  // namespace dfi::eval
