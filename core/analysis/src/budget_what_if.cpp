#include "dfi/analysis/budget_what_if.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <utility>

#include <nlohmann/json.hpp>

#include "dfi/analysis/ddtree.h"
#include "dfi/analysis/position_metrics.h"
#include "dfi/analysis/recorded_summary.h"
#include "dfi/analysis/run_summary.h"
#include "dfi/base/error.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/session/reader.h"
#include "dfi/session/record_fields.h"

namespace dfi::analysis {
namespace {

// The largest DDTree budget a what-if tries by default: past it, trees verify more tokens than
// a serving engine batches per request.
constexpr int kLargestDefaultBudget = 256;

// Each step's acceptance length under one setting, as the run summary's responses, so the
// what-if's tau and interval are the summary's (same prompts resampled, same seed).
template <typename AcceptedOf>
std::vector<SummaryResponse> responsesUnder(std::span<const session::StepRecord> steps, AcceptedOf acceptedOf) {
  std::map<std::int64_t, SummaryResponse> byResponse;  // a teacher-forced run: one response a prompt
  for (const session::StepRecord& step : steps) {
    SummaryResponse& r = byResponse[step.promptId];
    r.promptId = step.promptId;
    r.acceptance.stepAcceptLengths.push_back(acceptedOf(step) + 1);
  }
  std::vector<SummaryResponse> out;
  for (auto& [key, response] : byResponse) out.push_back(std::move(response));
  return out;
}

WhatIfRow rowOf(WhatIfKind kind, int value, int verified, std::span<const SummaryResponse> responses,
                double confidence, int resamples) {
  const PromptTaus taus = promptTaus(responses);
  WhatIfRow row{.kind = kind, .value = value, .verifiedTokens = verified, .meanVerifiedTokens = static_cast<double>(verified)};
  row.prompts = static_cast<std::int64_t>(taus.taus.size());
  row.tau = bootstrapMean(taus.taus, confidence, resamples);
  return row;
}

const nlohmann::json& requiredField(const nlohmann::json& json, const char* field, const std::string& file) {
  if (!json.is_object() || !json.contains(field))
    throw ValidationError(std::string("cost model is missing '") + field + "'", {.file = file, .item = field});
  return json.at(field);
}

double positiveMilliseconds(const nlohmann::json& value, const std::string& field, const std::string& file) {
  if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>()))
    throw ValidationError("'" + field + "' must be a positive number of milliseconds, not " + value.dump(),
                          {.file = file, .item = field});
  return value.get<double>();
}

}  // namespace

double CostModel::targetMilliseconds(int tokens) const {
  if (target.size() == 1) return target.front().milliseconds;
  // The segment that holds `tokens`, or the first or last one extended.
  std::size_t upper = 1;
  while (upper + 1 < target.size() && target[upper].tokens < tokens) ++upper;
  const Point& a = target[upper - 1];
  const Point& b = target[upper];
  const double slope = (b.milliseconds - a.milliseconds) / (b.tokens - a.tokens);
  return std::max(0.0, a.milliseconds + slope * (tokens - a.tokens));
}

double CostModel::speedup(double tau, int verifiedTokens) const {
  return tau * targetMilliseconds(1) / (drafterMilliseconds + targetMilliseconds(verifiedTokens));
}

CostModel parseCostModel(const nlohmann::json& json, const std::string& file) {
  CostModel cost;
  const nlohmann::json& target = requiredField(json, "target_ms", file);
  if (!target.is_object() || target.empty())
    throw ValidationError("'target_ms' must map verified token counts to milliseconds, e.g. {\"1\": 21.0, \"16\": 24.5}",
                          {.file = file, .item = "target_ms"});
  for (const auto& [key, value] : target.items()) {
    const std::string field = "target_ms." + key;
    int tokens = 0;
    if (std::sscanf(key.c_str(), "%d", &tokens) != 1 || tokens < 1 || std::to_string(tokens) != key)
      throw ValidationError("'" + field + "': the key must be a number of verified tokens (1 or more)",
                            {.file = file, .item = field});
    cost.target.push_back({tokens, positiveMilliseconds(value, field, file)});
  }
  std::ranges::sort(cost.target, {}, &CostModel::Point::tokens);
  cost.drafterMilliseconds = positiveMilliseconds(requiredField(json, "drafter_ms", file), "drafter_ms", file);
  cost.source = json.value("source", file);
  return cost;
}

nlohmann::json costModelJson(const CostModel& cost) {
  nlohmann::json target = nlohmann::json::object();
  for (const CostModel::Point& p : cost.target) target[std::to_string(p.tokens)] = p.milliseconds;
  return {{"target_ms", target}, {"drafter_ms", cost.drafterMilliseconds}, {"source", cost.source}};
}

std::vector<session::StatisticRecord> costStatistics(const CostModel& cost, session::RunId run) {
  session::StatisticRecord tokens{.runId = run, .name = kCostTokensStatistic};
  session::StatisticRecord target{.runId = run, .name = kCostTargetStatistic};
  for (const CostModel::Point& p : cost.target) {
    tokens.values.push_back(static_cast<float>(p.tokens));
    target.values.push_back(static_cast<float>(p.milliseconds));
  }
  return {tokens, target,
          {.runId = run, .name = kCostDrafterStatistic, .values = {static_cast<float>(cost.drafterMilliseconds)}}};
}

std::optional<CostModel> costFromStatistics(std::span<const session::StatisticRecord> statistics,
                                            const std::string& source) {
  const auto find = [&](const char* name) -> const session::StatisticRecord* {
    const auto it = std::ranges::find(statistics, std::string(name), &session::StatisticRecord::name);
    return it == statistics.end() ? nullptr : &*it;
  };
  const auto* tokens = find(kCostTokensStatistic);
  const auto* target = find(kCostTargetStatistic);
  const auto* drafter = find(kCostDrafterStatistic);
  if (!tokens || !target || !drafter || tokens->values.empty() || tokens->values.size() != target->values.size() ||
      drafter->values.size() != 1)
    return std::nullopt;
  CostModel cost{.drafterMilliseconds = drafter->values[0], .source = source};
  for (std::size_t i = 0; i < tokens->values.size(); ++i)
    cost.target.push_back({static_cast<int>(tokens->values[i]), target->values[i]});
  return cost;
}

std::string WhatIfRow::label() const {
  switch (kind) {
    case WhatIfKind::VerifyLength: return "verify " + std::to_string(value);
    case WhatIfKind::TreeBudget: return "ddtree-" + std::to_string(value);
    case WhatIfKind::ConfidenceThreshold: {
      char text[24];
      std::snprintf(text, sizeof text, "confidence %.2g", value / 100.0);
      return text;
    }
  }
  return {};
}

std::vector<int> defaultTreeBudgets(int blockSize, int topK) {
  std::vector<int> budgets;
  // A tree holds at most k candidates in each of its B-1 slots.
  const int fillable = std::max(0, blockSize - 1) * topK;
  for (int n = 2; n <= std::min(kLargestDefaultBudget, fillable); n *= 2) budgets.push_back(n);
  return budgets;
}

std::vector<int> treeBudgetsFor(const session::RunRecord& run) {
  try {
    const modelspec::DrafterConfig drafter =
        modelspec::parseDrafterConfigText(run.drafter.configJson, run.drafter.path + "/config.json");
    if (drafter.dspark && drafter.dspark->markovRank > 0) return {};
  } catch (const std::exception&) {
    // A config this build cannot read: its DDTree runs were built, so their budgets stand.
  }
  return defaultTreeBudgets(run.blockSize, run.topK);
}

std::vector<WhatIfRow> budgetWhatIfs(const WhatIfInput& input, const std::optional<CostModel>& cost, double confidence,
                                     int resamples) {
  for (const session::StepRecord& step : input.steps)
    if (step.mode != session::EvaluationMode::TeacherForced)
      throw Error("what-ifs read teacher-forced steps; step " + std::to_string(step.stepId) + " is of another mode");
  std::vector<WhatIfRow> rows;
  for (int v = 2; v <= input.blockSize; ++v) {
    const auto responses = responsesUnder(
        input.steps, [v](const session::StepRecord& s) { return std::min(s.acceptedCount, v - 1); });
    rows.push_back(rowOf(WhatIfKind::VerifyLength, v, v, responses, confidence, resamples));
  }
  if (input.topK > 0)
    for (const int budget : input.treeBudgets) {
      const auto responses = responsesUnder(input.steps, [&](const session::StepRecord& s) {
        const DDTree tree = stepTree(s, input.topK, budget);
        return static_cast<std::int32_t>(acceptedPath(tree, s.targetTokens).size()) - 1;
      });
      rows.push_back(rowOf(WhatIfKind::TreeBudget, budget, budget + 1, responses, confidence, resamples));
    }
  // Per confidence row, each step's verified tokens (the anchor and the drafts it verifies).
  std::map<std::size_t, std::vector<int>> verifiedPerStep;
  const bool confident = std::ranges::any_of(input.steps, [](const session::StepRecord& s) { return !s.draftConfidence.empty(); });
  if (confident)
    for (const double threshold : kVerifyThresholds) {
      std::vector<int>& verified = verifiedPerStep[rows.size()];
      const auto responses = responsesUnder(input.steps, [&](const session::StepRecord& s) {
        const int length = confidenceVerifyLength(s, threshold);
        verified.push_back(length + 1);
        return std::min(s.acceptedCount, length);
      });
      const double mean = std::accumulate(verified.begin(), verified.end(), 0.0) / static_cast<double>(verified.size());
      WhatIfRow row = rowOf(WhatIfKind::ConfidenceThreshold, static_cast<int>(std::lround(threshold * 100)),
                            static_cast<int>(std::lround(mean)), responses, confidence, resamples);
      row.meanVerifiedTokens = mean;
      rows.push_back(row);
    }
  if (cost && !rows.empty()) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      WhatIfRow& row = rows[i];
      // A varying verify length: tau over the mean cost of a step, each step at its own length.
      const auto varying = verifiedPerStep.find(i);
      double meanTargetMs = 0;
      if (varying != verifiedPerStep.end())
        for (int tokens : varying->second)
          meanTargetMs += cost->targetMilliseconds(tokens) / static_cast<double>(varying->second.size());
      auto speedupAt = [&](double tau) {
        return varying == verifiedPerStep.end()
                   ? cost->speedup(tau, row.verifiedTokens)
                   : tau * cost->targetMilliseconds(1) / (cost->drafterMilliseconds + meanTargetMs);
      };
      row.speedup = Interval{speedupAt(row.tau.estimate), speedupAt(row.tau.low), speedupAt(row.tau.high)};
    }
    std::ranges::max_element(rows, {}, [](const WhatIfRow& r) { return r.speedup->estimate; })->best = true;
  }
  return rows;
}

std::vector<RecordedWhatIfs> recordedWhatIfs(const std::string& sessionPath, const std::optional<CostModel>& entered) {
  session::Reader reader(sessionPath);
  const std::vector<session::RunRecord> runs = reader.runs();
  std::optional<CostModel> cost = entered;
  if (!cost)
    for (const session::RunRecord& run : runs)
      if (auto recorded = costFromStatistics(reader.statistics(run.runId, 0),
                                             "calibrated in run " + std::to_string(run.runId) + " on " + run.device))
        cost = std::move(recorded);
  std::vector<RecordedWhatIfs> out;
  for (const SummaryRun& evaluation : recordedSummaryRuns(sessionPath)) {
    if (evaluation.mode != enumName(session::EvaluationMode::TeacherForced) || evaluation.runIds.empty()) continue;
    const auto first = std::ranges::find(runs, evaluation.runIds.front(), &session::RunRecord::runId);
    std::vector<session::StepRecord> steps;
    for (const session::RunId id : evaluation.runIds)
      reader.forEachStep(id, [&](const session::StepRecord& step) { steps.push_back(step); });
    const WhatIfInput input{.steps = steps,
                            .blockSize = first->blockSize,
                            .topK = first->topK,
                            .treeBudgets = treeBudgetsFor(*first)};
    out.push_back({evaluation.drafter + " " + evaluation.variant, evaluation.runIds, cost, budgetWhatIfs(input, cost)});
  }
  return out;
}

std::string formatWhatIfs(std::span<const WhatIfRow> rows, const std::string& run, const std::optional<CostModel>& cost) {
  std::string out = "\nWhat-ifs of " + run + " (from its teacher-forced steps; tau z-lab, 95% CI over prompts";
  out += cost ? "; speedup over target-only decoding, costs: " + cost->source + ")\n"
              : "; no cost model: give --cost FILE or record one with run --calibrate-cost)\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-11s %8s  %-17s %s\n", "setting", "verifies", "tau [95% CI]",
                cost ? "speedup [95% CI]" : "");
  out += line;
  for (const WhatIfRow& r : rows) {
    char tau[48], speedup[48] = "";
    std::snprintf(tau, sizeof tau, "%.2f [%.2f, %.2f]", r.tau.estimate, r.tau.low, r.tau.high);
    if (r.speedup)
      std::snprintf(speedup, sizeof speedup, "%.2fx [%.2f, %.2f]%s", r.speedup->estimate, r.speedup->low,
                    r.speedup->high, r.best ? "  best" : "");
    std::snprintf(line, sizeof line, "  %-11s %8d  %-17s %s\n", r.label().c_str(), r.verifiedTokens, tau, speedup);
    out += line;
  }
  out += "  verify v: the whole block drafted, its first v tokens verified. A drafter run at block size v drafts "
         "differently (measure it with run --block-size v)\n";
  if (std::ranges::any_of(rows, [](const WhatIfRow& r) { return r.kind == WhatIfKind::ConfidenceThreshold; }))
    out += "  confidence t: each step verifies the drafts whose predicted prefix survival (DSpark's confidence head) "
           "is at least t; verifies: the mean, rounded\n";
  return out;
}

nlohmann::json whatIfJson(std::span<const WhatIfRow> rows) {
  const auto interval = [](const Interval& i) { return nlohmann::json{{"estimate", i.estimate}, {"ci", {i.low, i.high}}}; };
  nlohmann::json out = nlohmann::json::array();
  for (const WhatIfRow& r : rows) {
    nlohmann::json row{{"setting", r.label()},
                       {"kind", r.kind == WhatIfKind::VerifyLength ? "verify-length"
                                : r.kind == WhatIfKind::TreeBudget ? "ddtree-budget"
                                                                   : "confidence-threshold"},
                       {"value", r.value},
                       {"verified_tokens", r.verifiedTokens},
                       {"mean_verified_tokens", r.meanVerifiedTokens},
                       {"prompts", r.prompts},
                       {"tau", interval(r.tau)},
                       {"best", r.best}};
    row["speedup"] = r.speedup ? interval(*r.speedup) : nlohmann::json(nullptr);
    out.push_back(row);
  }
  return out;
}

}  // namespace dfi::analysis
