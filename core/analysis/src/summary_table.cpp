#include "dfi/analysis/summary_table.h"

#include <algorithm>
#include <cstdio>

#include "dfi/analysis/statistics.h"
#include "dfi/settings/settings_fields.h"

namespace dfi::analysis {
namespace {

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

std::string fixed3(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

}  // namespace

std::string formatComparisons(std::span<const TauComparison> comparisons) {
  auto interval = [](const Interval& d) {
    return (d.estimate >= 0 ? "+" : "") + fixed3(d.estimate) + " [" + fixed3(d.low) + ", " + fixed3(d.high) + "]";
  };
  std::vector<std::vector<std::string>> drafters, variants;
  bool tooFew = false;
  for (const TauComparison& c : comparisons) {
    // Under the prompts a verdict needs, an interval clear of zero is no finding (one rule,
    // verdictPossible, as in the diagnosis and the GUI).
    const bool verdict = verdictPossible(c.prompts);
    tooFew = tooFew || !verdict;
    const std::string n = "n " + std::to_string(c.prompts) + (verdict ? "" : "*");
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
  if (tooFew)
    out += "  * fewer than " + std::to_string(kMinPromptsForVerdict) +
           " paired prompts: too few for a verdict, whatever the interval says (evaluate more prompts)\n";
  return out;
}

std::string formatSummaryTable(std::span<const SummaryRow> rows) {
  const bool sampled = std::ranges::any_of(rows, [](const SummaryRow& r) { return r.sampling != "greedy"; });
  const bool repeated = std::ranges::any_of(rows, [](const SummaryRow& r) { return r.tauOverRepeats.has_value(); });
  std::vector<std::string> header{"drafter", "mode", "mask", "prompts", "n", "steps", "tau(ref) [95% CI]"};
  if (repeated) header.push_back("over repeats [95% CI]");
  header.insert(header.end(), {"tau(sglang)", "tau(vllm)"});
  std::vector<std::vector<std::string>> cells{header};
  auto interval = [](const Interval& i) {
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
    line.insert(line.end(), {measured && r.tauSglang ? fixed3(*r.tauSglang) : "-", measured ? fixed3(r.tauVllm.estimate) : "-"});
    cells.push_back(std::move(line));
  }
  std::string out = alignColumns(cells, 4, "");
  out +=
      "tau(ref): mean over responses of each response's mean acceptance length (z-lab benchmark), with a\n"
      "  95% percentile-bootstrap interval over prompts (" + std::to_string(kBootstrapResamples) +
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
    const auto known = parseEnum<settings::StepCounting>(counting);
    out += "live steps counted " + (known ? std::string(settings::stepCountingDescription(*known)) : counting) +
           (countings.size() > 1 ? " (" + counting + " runs)" : "") + "\n";
  }
  return out;
}

}  // namespace dfi::analysis
