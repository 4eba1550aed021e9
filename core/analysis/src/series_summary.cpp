#include "dfi/analysis/series_summary.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "fixed_text.h"

namespace dfi::analysis {
namespace {

const SummaryRun* runOf(std::span<const SummaryRun> runs, const std::string& drafter, const std::string& mode,
                        const std::string& variant) {
  const auto it = std::ranges::find_if(runs, [&](const SummaryRun& r) {
    return r.drafter == drafter && r.mode == mode && r.variant == variant;
  });
  return it == runs.end() ? nullptr : &*it;
}

// Per drafted slot; a drafter sampling from the anchor drafts B slots, so a step may accept
// more than B-1 (the slots reach the longest acceptance seen, as run_metrics' do).
std::vector<double> slotRates(const SummaryRun& run, int blockSize) {
  int longest = blockSize;
  for (const SummaryResponse& r : run.responses)
    for (int length : r.acceptance.stepAcceptLengths) longest = std::max(longest, length);
  std::vector<double> rates(static_cast<std::size_t>(std::max(longest - 1, 0)), 0.0);
  std::int64_t steps = 0;
  for (const SummaryResponse& r : run.responses)
    for (int length : r.acceptance.stepAcceptLengths) {
      ++steps;
      for (int slot = 0; slot < length - 1 && slot < static_cast<int>(rates.size()); ++slot) rates[slot] += 1;
    }
  for (double& rate : rates) rate = steps ? rate / static_cast<double>(steps) : 0.0;
  return rates;
}

// Half the closest spacing of two checkpoints: a logged value belongs to at most one of them.
std::int64_t defaultWindow(const std::vector<SeriesPoint>& points) {
  std::int64_t spacing = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 1; i < points.size(); ++i) spacing = std::min(spacing, points[i].step - points[i - 1].step);
  return points.size() < 2 ? spacing : spacing / 2;
}

using detail::fixed;

}  // namespace

SeriesSummary summarizeSeries(std::span<const SummaryRun> runs, std::span<const SeriesMember> members,
                              const TrainingLog* log, const std::string& mode, std::int64_t logWindow) {
  SeriesSummary out{.mode = mode, .variant = "reference"};
  if (out.mode.empty()) {
    const bool live = std::ranges::any_of(members, [&](const SeriesMember& m) {
      return runOf(runs, m.drafter, "live", out.variant) != nullptr;
    });
    out.mode = live ? "live" : "teacher-forced";
  }
  std::vector<std::pair<SeriesMember, const SummaryRun*>> found;
  for (const SeriesMember& m : members)
    if (const SummaryRun* run = runOf(runs, m.drafter, out.mode, out.variant)) found.emplace_back(m, run);
  if (found.empty())
    throw UsageError("no checkpoint of the series has a " + out.mode + " run under the reference mask");
  std::ranges::stable_sort(found, {}, [](const auto& f) { return f.first.step; });

  for (const auto& [member, run] : found) {
    const auto rows = summarizeRuns(std::span(run, 1));
    const auto all = std::ranges::find(rows, std::string("all"), &SummaryRow::dataset);
    const SummaryRow& row = all != rows.end() ? *all : rows.front();
    out.points.push_back({.drafter = member.drafter,
                          .step = member.step,
                          .prompts = static_cast<std::int64_t>(promptTaus(run->responses).prompts.size()),
                          .tau = row.tau,
                          .slotAcceptance = slotRates(*run, member.blockSize),
                          .analytic = member.analytic});
  }
  if (log) {
    out.logTag = loggedAcceptance(*log);
    out.analyticLogTag = loggedAnalyticAcceptance(*log);
  }
  const std::int64_t window = logWindow >= 0 ? logWindow : defaultWindow(out.points);
  for (SeriesPoint& p : out.points) {
    if (out.logTag)
      if (const auto logged = loggedAt(*log, out.logTag->tag, p.step, window)) {
        p.logged = logged->value + out.logTag->toTau;
        p.loggedStep = logged->step;
      }
    if (out.analyticLogTag)
      if (const auto logged = loggedAt(*log, out.analyticLogTag->tag, p.step, window)) {
        p.loggedAnalytic = logged->value + out.analyticLogTag->toTau;
        p.loggedAnalyticStep = logged->step;
      }
  }
  for (std::size_t i = 1; i < out.points.size(); ++i)
    if (out.points[i].tau.estimate > out.points[out.best].tau.estimate) out.best = i;
  if (out.best + 1 < out.points.size())
    out.bestMinusLast = pairedDifference(*found[out.best].second, *found.back().second);
  return out;
}

std::string formatSeries(const SeriesSummary& s) {
  std::string out = "\ncheckpoint series (" + s.mode + ", " + s.variant + " mask): tau by training step";
  out += s.logTag ? " against the training log's " + s.logTag->tag + " (" + s.logTag->convention + ")\n"
                  : " (no training log with a known acceptance tag)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%10s  %-24s %7s  %-22s %8s %8s\n", "step", "checkpoint", "prompts", "tau [95% CI]",
                "logged", "gap");
  out += line;
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const SeriesPoint& p = s.points[i];
    const std::string tau = fixed(p.tau.estimate) + " [" + fixed(p.tau.low) + ", " + fixed(p.tau.high) + "]";
    std::snprintf(line, sizeof line, "%10lld  %-24s %7lld  %-22s %8s %8s%s\n", static_cast<long long>(p.step),
                  p.drafter.c_str(), static_cast<long long>(p.prompts), tau.c_str(),
                  p.logged ? fixed(*p.logged).c_str() : "-", p.gap() ? fixed(*p.gap(), 3).c_str() : "-",
                  i == s.best ? "  best" : "");
    out += line;
  }
  if (s.logTag) out += "gap: tau measured here minus the logged acceptance at the nearest logged step\n";
  if (std::ranges::any_of(s.points, [](const SeriesPoint& p) { return p.analytic || p.loggedAnalytic; })) {
    out += "at T=1: the analytic accept_len measured here (teacher-forced, from sum min(p,q)) against " +
           (s.analyticLogTag ? "the log's " + s.analyticLogTag->tag + " (" + s.analyticLogTag->convention + ")"
                             : std::string("no logged counterpart (speculators logs it as accept_len)")) +
           ":\n";
    std::snprintf(line, sizeof line, "%10s  %-22s %8s %8s\n", "step", "here [95% CI]", "logged", "gap");
    out += line;
    for (const SeriesPoint& p : s.points) {
      const std::string here =
          p.analytic ? fixed(p.analytic->estimate) + " [" + fixed(p.analytic->low) + ", " + fixed(p.analytic->high) + "]"
                     : std::string("-");
      std::snprintf(line, sizeof line, "%10lld  %-22s %8s %8s\n", static_cast<long long>(p.step), here.c_str(),
                    p.loggedAnalytic ? fixed(*p.loggedAnalytic).c_str() : "-",
                    p.analyticGap() ? fixed(*p.analyticGap(), 3).c_str() : "-");
      out += line;
    }
  }
  const SeriesPoint& best = s.points[s.best];
  if (s.bestMinusLast) {
    const Interval& d = s.bestMinusLast->difference;
    out += "best " + best.drafter + " (step " + std::to_string(best.step) + ") - last " + s.points.back().drafter +
           ": " + fixed(d.estimate) + " [" + fixed(d.low) + ", " + fixed(d.high) + "] over " +
           std::to_string(s.bestMinusLast->prompts) + " prompts" +
           (d.low > 0 ? ": the last checkpoint is worse beyond prompt noise\n" : ": within prompt noise\n");
  } else {
    out += "best: the last checkpoint, " + best.drafter + " (step " + std::to_string(best.step) + ")\n";
  }
  out += "per-slot acceptance by step (slot 1, 2, ...):\n";
  for (const SeriesPoint& p : s.points) {
    std::snprintf(line, sizeof line, "%10lld ", static_cast<long long>(p.step));
    out += line;
    for (double rate : p.slotAcceptance) out += " " + fixed(rate, 2);
    out += "\n";
  }
  return out;
}

nlohmann::json seriesJson(const SeriesSummary& s) {
  nlohmann::json points = nlohmann::json::array();
  for (const SeriesPoint& p : s.points) {
    nlohmann::json point{{"drafter", p.drafter},
                         {"step", p.step},
                         {"prompts", p.prompts},
                         {"tau", p.tau.estimate},
                         {"tau_ci95", {p.tau.low, p.tau.high}},
                         {"slot_acceptance", p.slotAcceptance}};
    point["logged"] = p.logged ? nlohmann::json(*p.logged) : nlohmann::json(nullptr);
    point["analytic"] = p.analytic ? nlohmann::json(p.analytic->estimate) : nlohmann::json(nullptr);
    point["analytic_ci95"] = p.analytic ? nlohmann::json{p.analytic->low, p.analytic->high} : nlohmann::json(nullptr);
    point["logged_analytic"] = p.loggedAnalytic ? nlohmann::json(*p.loggedAnalytic) : nlohmann::json(nullptr);
    point["logged_analytic_step"] = p.loggedAnalyticStep ? nlohmann::json(*p.loggedAnalyticStep) : nlohmann::json(nullptr);
    point["logged_step"] = p.loggedStep ? nlohmann::json(*p.loggedStep) : nlohmann::json(nullptr);
    point["gap"] = p.gap() ? nlohmann::json(*p.gap()) : nlohmann::json(nullptr);
    points.push_back(std::move(point));
  }
  nlohmann::json out{{"mode", s.mode}, {"mask_variant", s.variant}, {"points", points},
                     {"best", s.points[s.best].drafter}};
  out["log_tag"] = s.logTag ? nlohmann::json(s.logTag->tag) : nlohmann::json(nullptr);
  out["analytic_log_tag"] = s.analyticLogTag ? nlohmann::json(s.analyticLogTag->tag) : nlohmann::json(nullptr);
  if (s.bestMinusLast)
    out["best_minus_last"] = {{"estimate", s.bestMinusLast->difference.estimate},
                              {"ci95", {s.bestMinusLast->difference.low, s.bestMinusLast->difference.high}},
                              {"prompts", s.bestMinusLast->prompts}};
  else
    out["best_minus_last"] = nullptr;
  return out;
}

}  // namespace dfi::analysis
