#include "summary_table.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "dfi/engine/step_counting.h"

namespace dfi::eval {
namespace {

double meanOf(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Per-response tau keyed by (prompt, repeat): what paired comparisons join on.
std::map<std::pair<std::int64_t, int>, double> responseTaus(const SummaryRun& run) {
  std::map<std::pair<std::int64_t, int>, double> taus;
  for (const auto& r : run.responses)
    if (const auto tau = analysis::responseTau(r.acceptance)) taus[{r.promptId, r.sample}] = *tau;
  return taus;
}

SummaryRow rowOf(const SummaryRun& run, const std::string& dataset, const std::vector<SummaryResponse>& responses,
                 double confidence, int resamples) {
  SummaryRow row{run.drafter, run.mode, run.variant, dataset, run.sampling};
  // Per-response means are what tau(reference) averages; a prompt's repeats are averaged first
  // (they share the prompt), so the bootstrap resamples prompts and its estimate is tau.
  std::vector<analysis::ResponseAcceptance> acceptances;
  std::map<std::int64_t, std::vector<double>> byPrompt;
  std::map<int, std::vector<double>> byRepeat;
  for (const auto& r : responses) {
    acceptances.push_back(r.acceptance);
    row.steps += static_cast<std::int64_t>(r.acceptance.stepAcceptLengths.size());
    if (const auto tau = analysis::responseTau(r.acceptance)) {
      byPrompt[r.promptId].push_back(*tau);
      byRepeat[r.sample].push_back(*tau);
      ++row.responses;
    }
  }
  std::vector<double> perPrompt, perRepeat;
  for (const auto& [prompt, taus] : byPrompt) perPrompt.push_back(meanOf(taus));
  for (const auto& [repeat, taus] : byRepeat) perRepeat.push_back(meanOf(taus));
  row.tau = analysis::bootstrapMean(perPrompt, confidence, resamples);
  if (perRepeat.size() > 1) {
    row.repeats = static_cast<int>(perRepeat.size());
    row.tauOverRepeats = analysis::studentMean95(perRepeat);
  }
  row.tauVllm = analysis::tauVllm(acceptances);
  if (run.mode == "live") {
    row.tauSglang = analysis::tauSglang(acceptances);
    row.stepCounting = run.stepCounting;
  }
  return row;
}

// Columns padded to their widest cell; the first `textColumns` align left, numbers right.
std::string alignColumns(const std::vector<std::vector<std::string>>& cells, std::size_t textColumns,
                         const std::string& indent) {
  std::vector<std::size_t> width;
  for (const auto& line : cells) {
    width.resize(std::max(width.size(), line.size()), 0);
    for (std::size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  }
  std::string out;
  for (const auto& line : cells) {
    out += indent;
    for (std::size_t c = 0; c < line.size(); ++c) {
      const std::string pad(width[c] - line[c].size(), ' ');
      out += c < textColumns ? line[c] + pad : pad + line[c];
      out += c + 1 < line.size() ? "  " : "\n";
    }
  }
  return out;
}

// Responses in prompt order, whatever order they were recorded in: the bootstrap resamples by
// index, so merged shards (another order of the same responses) must print the same intervals
// as the unsharded run.
std::vector<SummaryResponse> inPromptOrder(const SummaryRun& run) {
  std::vector<SummaryResponse> sorted = run.responses;
  std::ranges::stable_sort(sorted, {}, [](const SummaryResponse& r) { return std::pair(r.promptId, r.sample); });
  return sorted;
}

std::string fixed3(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

}  // namespace

std::vector<std::string> drafterLabels(const std::vector<std::string>& paths) {
  auto tail = [](const std::string& path, std::size_t parts) {
    std::vector<std::string> names;
    for (const auto& part : std::filesystem::path(path).lexically_normal())
      if (!part.empty() && part != "/") names.push_back(part.string());
    std::string label;
    for (std::size_t i = names.size() - std::min(parts, names.size()); i < names.size(); ++i)
      label += (label.empty() ? "" : "/") + names[i];
    return label;
  };
  std::vector<std::string> labels;
  for (const std::string& path : paths) {
    std::size_t parts = 1;
    // Grow this label until no other distinct path shares it (or the whole path is used).
    for (; parts < 64; ++parts) {
      const std::string mine = tail(path, parts);
      const bool clash = std::ranges::any_of(paths, [&](const std::string& other) {
        return std::filesystem::path(other).lexically_normal() != std::filesystem::path(path).lexically_normal() &&
               tail(other, parts) == mine;
      });
      if (!clash) break;
    }
    labels.push_back(tail(path, parts));
  }
  return labels;
}

std::vector<SummaryRow> summarize(std::span<const SummaryRun> runs, double confidence, int resamples) {
  std::vector<SummaryRow> rows;
  for (const SummaryRun& run : runs) {
    const std::vector<SummaryResponse> sorted = inPromptOrder(run);
    std::vector<std::string> datasets;  // in order of first appearance
    for (const auto& r : sorted)
      if (std::ranges::find(datasets, r.dataset) == datasets.end()) datasets.push_back(r.dataset);
    for (const std::string& dataset : datasets) {
      std::vector<SummaryResponse> responses;
      for (const auto& r : sorted)
        if (r.dataset == dataset) responses.push_back(r);
      rows.push_back(rowOf(run, dataset, responses, confidence, resamples));
    }
    if (datasets.size() != 1)  // several prompt sets, or none (a run cancelled before any prompt)
      rows.push_back(rowOf(run, "all", sorted, confidence, resamples));
  }
  return rows;
}

std::vector<TauComparison> pairedComparisons(std::span<const SummaryRun> runs, double confidence, int resamples) {
  // Joined on (prompt, repeat); a prompt's repeats averaged on both sides, so the paired
  // bootstrap resamples prompts.
  auto compare = [&](const SummaryRun& run, const SummaryRun& baseline) {
    const auto base = responseTaus(baseline);
    std::map<std::int64_t, std::pair<std::vector<double>, std::vector<double>>> byPrompt;
    for (const auto& [key, tau] : responseTaus(run))
      if (const auto it = base.find(key); it != base.end()) {
        byPrompt[key.first].first.push_back(it->second);
        byPrompt[key.first].second.push_back(tau);
      }
    std::vector<double> a, b;
    for (const auto& [prompt, pair] : byPrompt) {
      a.push_back(meanOf(pair.first));
      b.push_back(meanOf(pair.second));
    }
    return TauComparison{run.mode, run.drafter, run.variant, baseline.drafter, baseline.variant,
                         static_cast<std::int64_t>(a.size()),
                         analysis::bootstrapPairedDifference(a, b, confidence, resamples)};
  };
  std::vector<TauComparison> out;
  for (const SummaryRun& run : runs) {  // against the first drafter with this mode and variant
    const auto baseline = std::ranges::find_if(
        runs, [&](const SummaryRun& b) { return b.mode == run.mode && b.variant == run.variant; });
    if (baseline->drafter != run.drafter) out.push_back(compare(run, *baseline));
  }
  for (const SummaryRun& run : runs) {  // against the same drafter under the reference mask
    if (run.variant == "reference") continue;
    const auto baseline = std::ranges::find_if(runs, [&](const SummaryRun& b) {
      return b.drafter == run.drafter && b.mode == run.mode && b.variant == "reference";
    });
    if (baseline != runs.end()) out.push_back(compare(run, *baseline));
  }
  return out;
}

std::string formatComparisons(std::span<const TauComparison> comparisons) {
  auto interval = [](const analysis::Interval& d) {
    return (d.estimate >= 0 ? "+" : "") + fixed3(d.estimate) + " [" + fixed3(d.low) + ", " + fixed3(d.high) + "]";
  };
  std::vector<std::vector<std::string>> drafters, variants;
  for (const TauComparison& c : comparisons) {
    const std::string n = "n " + std::to_string(c.prompts);
    if (c.acrossVariants())
      variants.push_back({c.drafter, c.mode, c.variant + " - " + c.baselineVariant, n, interval(c.difference)});
    else
      drafters.push_back({c.drafter + " - " + c.baselineDrafter, c.mode, c.variant, n, interval(c.difference)});
  }
  std::string out;
  if (!drafters.empty())
    out += "paired difference in tau(ref) against the first drafter, same prompts [95% CI]:\n" +
           alignColumns(drafters, 3, "  ");
  if (!variants.empty())
    out += "paired difference in tau(ref) against the reference mask, same drafter and prompts [95% CI]:\n" +
           alignColumns(variants, 3, "  ");
  return out;
}

nlohmann::json comparisonsJson(std::span<const TauComparison> comparisons) {
  nlohmann::json out = nlohmann::json::array();
  for (const TauComparison& c : comparisons)
    out.push_back({{"mode", c.mode},
                   {"drafter", c.drafter},
                   {"mask_variant", c.variant},
                   {"baseline", c.baselineDrafter},
                   {"baseline_mask_variant", c.baselineVariant},
                   {"prompts", c.prompts},
                   {"tau_reference_difference", c.difference.estimate},
                   {"tau_reference_difference_ci95", {c.difference.low, c.difference.high}}});
  return out;
}

std::string formatSummaryTable(std::span<const SummaryRow> rows) {
  const bool sampled = std::ranges::any_of(rows, [](const SummaryRow& r) { return r.sampling != "greedy"; });
  const bool repeated = std::ranges::any_of(rows, [](const SummaryRow& r) { return r.tauOverRepeats.has_value(); });
  std::vector<std::string> header{"drafter", "mode", "mask", "prompts", "n", "steps", "tau(ref) [95% CI]"};
  if (repeated) header.push_back("over repeats [95% CI]");
  header.insert(header.end(), {"tau(sglang)", "tau(vllm)"});
  std::vector<std::vector<std::string>> cells{header};
  auto interval = [](const analysis::Interval& i) {
    return fixed3(i.estimate) + " [" + fixed3(i.low) + ", " + fixed3(i.high) + "]";
  };
  for (const SummaryRow& r : rows) {
    // A shard with no prompts has no tau at all, not a tau of zero.
    const bool measured = r.responses > 0;
    const std::string mode = r.mode == "live" && r.sampling != "greedy" ? r.mode + " " + r.sampling : r.mode;
    std::vector<std::string> line{r.drafter, mode, r.variant, r.dataset, std::to_string(r.responses),
                                  std::to_string(r.steps), measured ? interval(r.tau) : "-"};
    if (repeated)
      line.push_back(r.tauOverRepeats ? std::to_string(r.repeats) + ": " + interval(*r.tauOverRepeats) : "-");
    line.insert(line.end(), {measured && r.tauSglang ? fixed3(*r.tauSglang) : "-", measured ? fixed3(r.tauVllm) : "-"});
    cells.push_back(std::move(line));
  }
  std::string out = alignColumns(cells, 4, "");
  out +=
      "tau(ref): mean over responses of each response's mean acceptance length (z-lab benchmark), with a\n"
      "  95% percentile-bootstrap interval over prompts (" + std::to_string(analysis::kBootstrapResamples) +
      " resamples, as the GUI); n: responses, steps: verify steps\n";
  if (repeated)
    out += "over repeats: N sampled repeats of every prompt, the Student-t interval of their tau (another seed)\n";
  out +=
      "tau(sglang): completion tokens / verify steps per request, averaged (live runs only)\n"
      "tau(vllm): 1 + accepted drafts / drafts, pooled over all steps\n";
  if (sampled)
    out += "live T>0: drafts sampled and accepted by rejection sampling (dflash 0.1.0); teacher-forced and\n"
           "  ddtree rows stay greedy measures (argmax drafts against the target's argmax) on the sampled text\n";
  std::vector<std::string> countings;
  for (const SummaryRow& r : rows)
    if (!r.stepCounting.empty() && std::ranges::find(countings, r.stepCounting) == countings.end())
      countings.push_back(r.stepCounting);
  for (const std::string& counting : countings) {
    const auto known = engine::parseStepCounting(counting);
    out += "live steps counted " + (known ? std::string(engine::stepCountingDescription(*known)) : counting) +
           (countings.size() > 1 ? " (" + counting + " runs)" : "") + "\n";
  }
  return out;
}

nlohmann::json summaryJson(std::span<const SummaryRow> rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const SummaryRow& r : rows) {
    nlohmann::json row = {{"drafter", r.drafter},     {"mode", r.mode},
                          {"mask_variant", r.variant}, {"prompt_set", r.dataset},
                          {"responses", r.responses},  {"steps", r.steps},
                          {"sampling", r.sampling}};
    if (r.tauOverRepeats) {
      row["repeats"] = r.repeats;
      row["tau_reference_repeats_ci95"] = {r.tauOverRepeats->low, r.tauOverRepeats->high};
    }
    if (r.responses > 0) {  // no tau keys at all for a run without responses
      row["tau_reference"] = r.tau.estimate;
      row["tau_reference_ci95"] = {r.tau.low, r.tau.high};
      row["tau_vllm"] = r.tauVllm;
      if (r.tauSglang) row["tau_sglang"] = *r.tauSglang;
    }
    if (!r.stepCounting.empty()) row["step_counting"] = r.stepCounting;
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace dfi::eval
