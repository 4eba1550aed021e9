#include "dfi/analysis/pass_bars.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/session/reader.h"
#include "dfi/settings/settings.h"

namespace dfi::analysis {
namespace {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

[[noreturn]] void malformed(std::string_view bar, const std::string& why) {
  throw UsageError("pass bar \"" + std::string(bar) + "\": " + why +
                   " (write e.g. \"tau(step40k) >= 4.0\", \"tau_vllm(step40k, ddtree-8) > 3.5\" or "
                   "\"paired(new - old) > -0.1\")");
}

RunSelector parseSelector(std::string_view bar, std::string_view text) {
  RunSelector selector;
  bool first = true;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = trimmed(text.substr(start, comma - start));
    if (part.empty()) malformed(bar, first ? "no drafter inside the parentheses" : "an empty item between commas");
    (first ? selector.drafter : selector.qualifiers.emplace_back()) = std::string(part);
    first = false;
    start = comma + 1;
  }
  return selector;
}

struct ComparisonWord {
  std::string_view symbol;
  BarComparison comparison;
};
// Two-character operators first, so that ">=" is not read as ">" then "=...".
constexpr ComparisonWord kComparisons[] = {{">=", BarComparison::AtLeast},
                                           {"<=", BarComparison::AtMost},
                                           {">", BarComparison::Above},
                                           {"<", BarComparison::Below}};

std::string_view symbolOf(BarComparison comparison) {
  for (const auto& word : kComparisons)
    if (word.comparison == comparison) return word.symbol;
  return "?";
}

bool meets(double measured, BarComparison comparison, double value) {
  switch (comparison) {
    case BarComparison::AtLeast: return measured >= value;
    case BarComparison::Above: return measured > value;
    case BarComparison::AtMost: return measured <= value;
    case BarComparison::Below: return measured < value;
  }
  return false;
}

std::string runName(const SummaryRun& run) {
  std::string name = run.drafter + " / " + run.mode + " / " + run.variant;
  if (run.sampling != "greedy") name += " / " + run.sampling;
  return name;
}

std::vector<std::string> datasetsOf(const SummaryRun& run) {
  std::vector<std::string> datasets;
  for (const auto& r : run.responses)
    if (std::ranges::find(datasets, r.dataset) == datasets.end()) datasets.push_back(r.dataset);
  return datasets;
}

bool isDatasetOnly(const SummaryRun& run, const std::string& qualifier) {
  return qualifier != run.mode && qualifier != run.variant && qualifier != run.sampling;
}

bool matches(const SummaryRun& run, const std::string& qualifier) {
  if (!isDatasetOnly(run, qualifier)) return true;
  const std::vector<std::string> datasets = datasetsOf(run);
  return std::ranges::find(datasets, qualifier) != datasets.end();
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The run a selector names, its responses narrowed to a named prompt set; or why there is none.
struct Selected {
  std::optional<SummaryRun> run;
  std::string problem;
};

Selected select(const RunSelector& selector, std::span<const SummaryRun> runs) {
  std::vector<const SummaryRun*> candidates;
  std::vector<std::string> drafters;
  for (const SummaryRun& run : runs) {
    if (run.drafter == selector.drafter) candidates.push_back(&run);
    if (std::ranges::find(drafters, run.drafter) == drafters.end()) drafters.push_back(run.drafter);
  }
  if (candidates.empty())
    return {std::nullopt, "no run of drafter '" + selector.drafter + "' (the session has: " + joined(drafters) + ")"};
  for (const std::string& qualifier : selector.qualifiers) {
    std::vector<const SummaryRun*> kept;
    for (const SummaryRun* run : candidates)
      if (matches(*run, qualifier)) kept.push_back(run);
    if (kept.empty()) {
      std::vector<std::string> known;
      for (const SummaryRun* run : candidates)
        known.push_back(run->mode + " / " + run->variant + " / " + run->sampling + " (prompt sets " +
                        joined(datasetsOf(*run)) + ")");
      return {std::nullopt, "'" + qualifier + "' is no mode, mask variant, sampling or prompt set of " +
                                selector.drafter + "'s runs: " + joined(known)};
    }
    candidates = std::move(kept);
  }
  // Unnamed, the mode is live and the variant reference where such a run is among the candidates.
  auto prefer = [&](auto field, const std::string& preferred) {
    const bool named = std::ranges::any_of(selector.qualifiers, [&](const std::string& q) {
      return std::ranges::any_of(candidates, [&](const SummaryRun* run) { return run->*field == q; });
    });
    if (named || candidates.size() < 2) return;
    std::vector<const SummaryRun*> kept;
    for (const SummaryRun* run : candidates)
      if (run->*field == preferred) kept.push_back(run);
    if (!kept.empty()) candidates = std::move(kept);
  };
  prefer(&SummaryRun::mode, "live");
  prefer(&SummaryRun::variant, "reference");
  if (candidates.size() > 1) {
    std::vector<std::string> names;
    for (const SummaryRun* run : candidates) names.push_back(runName(*run));
    return {std::nullopt, "'" + selector.drafter + "' names " + std::to_string(candidates.size()) +
                              " runs: " + joined(names) + "; add the mode, mask variant or sampling"};
  }
  SummaryRun run = *candidates.front();
  for (const std::string& qualifier : selector.qualifiers)
    if (isDatasetOnly(run, qualifier))
      std::erase_if(run.responses, [&](const SummaryResponse& r) { return r.dataset != qualifier; });
  return {std::move(run), {}};
}

// The summary's row of the whole run (its only prompt set's, or the "all" row).
const SummaryRow& wholeRunRow(const std::vector<SummaryRow>& rows) {
  const auto all = std::ranges::find(rows, std::string("all"), &SummaryRow::dataset);
  return all != rows.end() ? *all : rows.front();
}

BarResult measure(const PassBar& bar, std::span<const SummaryRun> runs, bool strict) {
  BarResult result{.bar = bar};
  const Selected run = select(bar.run, runs);
  if (!run.run) {
    result.problem = run.problem;
    return result;
  }
  result.run = runName(*run.run);
  if (bar.quantity == BarQuantity::Paired) {
    const Selected baseline = select(*bar.baseline, runs);
    if (!baseline.run) {
      result.problem = baseline.problem;
      return result;
    }
    result.baseline = runName(*baseline.run);
    const TauComparison difference = pairedDifference(*run.run, *baseline.run);
    result.prompts = difference.prompts;
    result.measured = difference.difference;
    if (difference.prompts == 0) result.problem = "the two runs share no prompt with recorded steps";
  } else {
    result.prompts = static_cast<std::int64_t>(promptTaus(run.run->responses).prompts.size());
    if (result.prompts == 0) {
      result.problem = "no recorded steps in " + result.run;
      return result;
    }
    const std::vector<SummaryRow> rows = summarizeRuns(std::span(&*run.run, 1));
    const SummaryRow& row = wholeRunRow(rows);
    result.measured = bar.quantity == BarQuantity::Tau ? row.tau : row.tauVllm;
  }
  if (!result.problem.empty()) return result;
  const Interval& m = result.measured;
  result.passed = strict ? meets(m.low, bar.comparison, bar.value) && meets(m.high, bar.comparison, bar.value)
                         : meets(m.estimate, bar.comparison, bar.value);
  result.withinNoise = m.low <= bar.value && bar.value <= m.high;
  return result;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

}  // namespace

PassBar parsePassBar(std::string_view text) {
  const std::string_view bar = trimmed(text);
  PassBar out{.text = std::string(bar)};
  const std::size_t open = bar.find('(');
  const std::size_t close = bar.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    malformed(bar, "no quantity with its runs in parentheses");
  const std::string_view quantity = trimmed(bar.substr(0, open));
  if (quantity == "tau") out.quantity = BarQuantity::Tau;
  else if (quantity == "tau_vllm") out.quantity = BarQuantity::TauVllm;
  else if (quantity == "paired") out.quantity = BarQuantity::Paired;
  else malformed(bar, "unknown quantity '" + std::string(quantity) + "' (tau, tau_vllm or paired)");

  const std::string_view inside = bar.substr(open + 1, close - open - 1);
  if (out.quantity == BarQuantity::Paired) {
    // Labels may hold hyphens (gemma-4-dflash): the minus is the one with a space either side.
    const std::size_t minus = inside.find(" - ");
    if (minus == std::string_view::npos || inside.find(" - ", minus + 1) != std::string_view::npos)
      malformed(bar, "paired takes two runs, paired(A - B), with a space either side of the minus");
    out.run = parseSelector(bar, inside.substr(0, minus));
    out.baseline = parseSelector(bar, inside.substr(minus + 3));
  } else {
    out.run = parseSelector(bar, inside);
  }

  std::string_view rest = trimmed(bar.substr(close + 1));
  const auto word = std::ranges::find_if(kComparisons, [&](const ComparisonWord& w) { return rest.starts_with(w.symbol); });
  if (word == std::end(kComparisons)) malformed(bar, "no comparison after the parentheses (>=, >, <= or <)");
  out.comparison = word->comparison;
  rest = trimmed(rest.substr(word->symbol.size()));
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), out.value);
  if (rest.empty() || ec != std::errc() || end != rest.data() + rest.size())
    malformed(bar, "the bar's value '" + std::string(rest) + "' is not a number");
  return out;
}

std::vector<BarResult> checkPassBars(std::span<const PassBar> bars, std::span<const SummaryRun> runs, bool strict) {
  std::vector<BarResult> results;
  for (const PassBar& bar : bars) results.push_back(measure(bar, runs, strict));
  return results;
}

std::vector<std::string> recordedPassBars(const std::string& sessionPath) {
  session::Reader reader(sessionPath);
  std::vector<std::string> bars;
  for (const session::RunRecord& run : reader.runs())
    for (const std::string& bar : settings::recordedRunSettings(run.settingsJson).passBars)
      if (std::ranges::find(bars, bar) == bars.end()) bars.push_back(bar);
  return bars;
}

std::string formatBarResults(std::span<const BarResult> results, bool strict) {
  std::string out;
  int failed = 0;
  for (const BarResult& r : results) {
    failed += r.passed ? 0 : 1;
    out += (r.passed ? "PASS  " : "FAIL  ") + r.bar.text;
    if (!r.problem.empty()) {
      out += "\n      " + r.problem + "\n";
      continue;
    }
    const Interval& m = r.measured;
    out += "\n      " + number(m.estimate) + " [" + number(m.low) + ", " + number(m.high) + "] over " +
           std::to_string(r.prompts) + " prompts: " + r.run;
    if (!r.baseline.empty()) out += "  minus  " + r.baseline;
    if (r.withinNoise) out += "\n      the 95% interval contains " + number(r.bar.value) + ": within prompt noise";
    if (!verdictPossible(r.prompts))
      out += "\n      fewer than " + std::to_string(kMinPromptsForVerdict) + " prompts: the interval is not to be trusted";
    out += "\n";
  }
  out += std::to_string(results.size() - static_cast<std::size_t>(failed)) + " of " + std::to_string(results.size()) +
         " pass bars met" + (strict ? " by the whole 95% interval" : " by the estimate") +
         (failed ? ": the gate fails.\n" : ".\n");
  return out;
}

nlohmann::json barResultsJson(std::span<const BarResult> results, bool strict) {
  nlohmann::json bars = nlohmann::json::array();
  bool all = true;
  for (const BarResult& r : results) {
    all = all && r.passed;
    nlohmann::json bar{{"bar", r.bar.text},        {"passed", r.passed},
                       {"comparison", symbolOf(r.bar.comparison)}, {"value", r.bar.value},
                       {"run", r.run},             {"baseline", r.baseline},
                       {"prompts", r.prompts},     {"within_noise", r.withinNoise},
                       {"problem", r.problem}};
    if (r.problem.empty())
      bar["measured"] = {{"estimate", r.measured.estimate}, {"low", r.measured.low}, {"high", r.measured.high}};
    bars.push_back(std::move(bar));
  }
  return {{"passed", all}, {"strict", strict}, {"bars", bars}};
}

}  // namespace dfi::analysis
