#include "dfi/analysis/diagnosis.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

#include "dfi/analysis/selector_metrics.h"
#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kBaseline = "baseline";

LintSeverity severityFromName(const std::string& name) {
  for (LintSeverity s : {LintSeverity::Error, LintSeverity::Warning, LintSeverity::Info})
    if (lintSeverityName(s) == name) return s;
  throw FormatError("unknown lint severity '" + name + "'", {.item = "settings_json.diagnosis.lint"});
}

// "block-size:8" -> 8; 0 for every other hypothesis.
int hypothesisBlockSize(std::string_view name) {
  constexpr std::string_view prefix = "block-size:";
  if (!name.starts_with(prefix)) return 0;
  int n = 0;
  const auto rest = name.substr(prefix.size());
  std::from_chars(rest.data(), rest.data() + rest.size(), n);
  return n;
}

// The runs of a diagnosis join their blocks on (prompt, step index): each drafts at the
// baseline's anchors in the baseline's order, also where a formatting hypothesis (no chat
// template, thinking) moves their absolute positions. The series keep the step index in
// `anchor` for the join; the result gets the baseline's anchors back.
ComparedSeries seriesKeyedByStep(const session::RunRecord& run, const StepSummaryScan& scan, int capLength) {
  std::vector<ComparedSeries> loaded = loadComparedSeries({run}, scan);
  ComparedSeries series;
  for (ComparedSeries& s : loaded)
    if (s.mode == session::EvaluationMode::TeacherForced) series = std::move(s);
  series.run = run.runId;
  for (ComparedStep& step : series.steps) {
    step.anchor = step.stepIndex;
    if (capLength > 0) step.acceptLength = std::min(step.acceptLength, capLength);
  }
  return series;
}

void restoreAnchors(std::vector<BlockRegression>& blocks, const std::map<std::pair<session::PromptId, std::int64_t>, std::int64_t>& anchorOf) {
  for (BlockRegression& b : blocks) {
    const auto it = anchorOf.find({b.prompt, b.anchor});
    if (it != anchorOf.end()) b.anchor = it->second;
  }
  if (blocks.size() > kDiagnosisBlocksKept) blocks.resize(kDiagnosisBlocksKept);
}

HypothesisResult measure(const PlannedHypothesis& planned, const session::RunRecord& run,
                         const session::RunRecord& baselineRun, const StepSummaryScan& scan,
                         const std::vector<session::StepSummary>& baselineAnchors, int resamples) {
  HypothesisResult result;
  result.planned = planned;
  const ComparedSeries hypothesis = seriesKeyedByStep(run, scan, 0);
  if (hypothesis.steps.empty()) return result;  // its run began, but no prompt of it finished
  result.run = run.runId;
  const ComparedSeries baseline = seriesKeyedByStep(baselineRun, scan, hypothesisBlockSize(planned.name));
  const std::vector<SeriesStatistics> stats = summarizeSeries({baseline, hypothesis}, resamples);
  PairComparison pair = comparePair(baseline, stats[0], hypothesis, stats[1], resamples);
  // The gains are the other direction's regressions; its interval is not used.
  PairComparison reverse = comparePair(hypothesis, stats[1], baseline, stats[0], 1);
  result.pairedPrompts = static_cast<std::int64_t>(pair.prompts.size());
  result.tau = bootstrapMean(pair.tauB, 0.95, resamples);
  result.deltaTau = pair.difference;
  std::map<std::pair<session::PromptId, std::int64_t>, std::int64_t> anchorOf;
  for (const session::StepSummary& s : baselineAnchors) anchorOf[{s.promptId, s.stepIndex}] = s.anchorPosition;
  result.losses = std::move(pair.regressions);
  for (BlockRegression& b : reverse.regressions) {  // there A = hypothesis: swap back to A = baseline
    std::swap(b.stepA, b.stepB);
    std::swap(b.acceptA, b.acceptB);
    result.gains.push_back(b);
  }
  restoreAnchors(result.losses, anchorOf);
  restoreAnchors(result.gains, anchorOf);
  return result;
}

int rank(const HypothesisResult& h) { return h.measured() ? 0 : h.planned.applicable ? 1 : 2; }

}  // namespace

std::string_view lintSeverityName(LintSeverity severity) {
  switch (severity) {
    case LintSeverity::Error: return "error";
    case LintSeverity::Warning: return "warning";
    case LintSeverity::Info: return "info";
  }
  return "info";
}

std::string withDiagnosisPlan(const std::string& settingsJson, const DiagnosisPlan& plan) {
  Json settings = settingsJson.empty() ? Json::object() : Json::parse(settingsJson);
  Json lint = Json::array(), battery = Json::array();
  for (const LintFinding& f : plan.lint)
    lint.push_back({{"severity", lintSeverityName(f.severity)}, {"code", f.code}, {"subject", f.subject},
                    {"message", f.message}});
  for (const PlannedHypothesis& h : plan.battery)
    battery.push_back({{"name", h.name}, {"change", h.change}, {"applicable", h.applicable}, {"reason", h.reason}});
  settings["diagnosis"] = {{"lint", lint}, {"battery", battery}};
  return settings.dump();
}

std::optional<DiagnosisPlan> diagnosisPlan(const std::string& settingsJson) {
  const Json settings = Json::parse(settingsJson, nullptr, false);
  if (settings.is_discarded() || !settings.is_object() || !settings.contains("diagnosis")) return std::nullopt;
  try {
    const Json& d = settings.at("diagnosis");
    DiagnosisPlan plan;
    for (const Json& f : d.at("lint"))
      plan.lint.push_back({severityFromName(f.at("severity").get<std::string>()), f.at("code").get<std::string>(),
                           f.at("subject").get<std::string>(), f.at("message").get<std::string>()});
    for (const Json& h : d.at("battery"))
      plan.battery.push_back({h.at("name").get<std::string>(), h.at("change").get<std::string>(),
                              h.at("applicable").get<bool>(), h.at("reason").get<std::string>()});
    return plan;
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(std::string("malformed diagnosis plan: ") + e.what(), {.item = "settings_json.diagnosis"});
  }
}

std::vector<LintFinding> measuredFindings(const session::RunRecord& baseline, const StepScan& steps) {
  SelectorTally tally;
  steps(baseline.runId, [&](const session::StepRecord& step) { tally.add(step); });
  const std::optional<SelectorMetrics> selector = tally.finish();
  if (!selector || selector->effective()) return {};
  const std::string train = "train the selector longer or with more weight (speculators' selector_loss_alpha)";
  const std::string action = selector->chainsKnown && selector->argmaxAcceptLength > selector->selectorAcceptLength
                                 ? "serve the drafter's argmax, whose chain accepts more, and " + train
                                 : train;
  return {{LintSeverity::Warning, "selector-not-effective",
           std::filesystem::path(baseline.drafter.path).filename().string() + ": the DFlash2 candidate selector",
           selector->verdict() + ". What to do: " + action + "."}};
}

std::vector<Diagnosis> readDiagnoses(const std::vector<session::RunRecord>& runs, const StepSummaryScan& scan,
                                     const StepScan& steps, int resamples) {
  std::vector<Diagnosis> out;
  for (std::size_t b = 0; b < runs.size(); ++b) {
    const session::RunRecord& baselineRun = runs[b];
    if (baselineRun.hypothesis != kBaseline) continue;
    const std::optional<DiagnosisPlan> plan = diagnosisPlan(baselineRun.settingsJson);
    Diagnosis diagnosis;
    diagnosis.baseline = baselineRun.runId;
    diagnosis.drafter = std::filesystem::path(baselineRun.drafter.path).filename().string();
    if (plan) diagnosis.lint = plan->lint;
    if (steps) std::ranges::move(measuredFindings(baselineRun, steps), std::back_inserter(diagnosis.lint));
    std::vector<session::StepSummary> baselineSteps;
    scan(baselineRun.runId, [&](const session::StepSummary& s) { baselineSteps.push_back(s); });
    const bool baselineMeasured = !baselineSteps.empty();
    if (baselineMeasured)
      diagnosis.baselineTau = summarizeSeries({seriesKeyedByStep(baselineRun, scan, 0)}, resamples)[0].tau;

    // This diagnosis's runs: after the baseline, same drafter, up to the next baseline of it.
    std::map<std::string, const session::RunRecord*> runOf;
    for (std::size_t r = b + 1; r < runs.size(); ++r) {
      if (runs[r].drafter.path != baselineRun.drafter.path) continue;
      if (runs[r].hypothesis == kBaseline) break;
      if (!runs[r].hypothesis.empty()) runOf.emplace(runs[r].hypothesis, &runs[r]);
    }
    for (const PlannedHypothesis& planned : plan ? plan->battery : std::vector<PlannedHypothesis>{}) {
      const auto it = runOf.find(planned.name);
      if (baselineMeasured && planned.applicable && it != runOf.end())
        diagnosis.hypotheses.push_back(measure(planned, *it->second, baselineRun, scan, baselineSteps, resamples));
      else
        diagnosis.hypotheses.push_back({.planned = planned});
    }
    std::stable_sort(diagnosis.hypotheses.begin(), diagnosis.hypotheses.end(),
                     [](const HypothesisResult& x, const HypothesisResult& y) {
                       if (rank(x) != rank(y)) return rank(x) < rank(y);
                       return x.measured() && x.deltaTau.estimate > y.deltaTau.estimate;
                     });
    out.push_back(std::move(diagnosis));
  }
  return out;
}

std::string diagnosisJson(const Diagnosis& diagnosis) {
  Json lint = Json::array(), hypotheses = Json::array();
  for (const LintFinding& f : diagnosis.lint)
    lint.push_back({{"severity", lintSeverityName(f.severity)}, {"code", f.code}, {"subject", f.subject},
                    {"message", f.message}});
  for (const HypothesisResult& h : diagnosis.hypotheses) {
    Json row = {{"name", h.planned.name}, {"applicable", h.planned.applicable}, {"change", h.planned.change}};
    if (h.measured()) {
      row["delta_tau"] = h.deltaTau.estimate;
      row["ci"] = {h.deltaTau.low, h.deltaTau.high};
      row["tau"] = h.tau.estimate;
      row["paired_prompts"] = h.pairedPrompts;
      row["candidate_cause"] = h.candidateCause();
      row["run_id"] = h.run;
    } else {
      row["delta_tau"] = nullptr;
      row["ci"] = nullptr;
      row["reason"] = h.planned.applicable ? "not measured (the diagnosis was cancelled before it ran)" : h.planned.reason;
    }
    hypotheses.push_back(std::move(row));
  }
  Json out = {{"drafter", diagnosis.drafter},
              {"baseline_run_id", diagnosis.baseline},
              {"baseline_tau", diagnosis.baselineTau.estimate},
              {"baseline_ci", {diagnosis.baselineTau.low, diagnosis.baselineTau.high}},
              {"lint", lint},
              {"hypotheses", hypotheses}};
  return out.dump(2);
}

}  // namespace dfi::analysis
