// engine::summaryRuns: an evaluation's runs as the one run summary (analysis/run_summary.h) takes
// them, for the CLI's table after `run` and serve's `done` alike.

#include <algorithm>

#include "dfi/engine/evaluation.h"
#include "dfi/session/record_fields.h"
#include "dfi/settings/settings_fields.h"

namespace dfi::engine {
namespace {

// A DDTree run's mode carries its budget, as `summary` prints a recorded one.
std::string modeLabel(EvaluationMode mode, int ddtreeBudget) {
  const std::string name(enumName(mode));
  return mode == EvaluationMode::DDTree ? name + "-" + std::to_string(ddtreeBudget) : name;
}

}  // namespace

std::vector<analysis::SummaryRun> summaryRuns(const EvaluationSettings& settings, const std::vector<EvaluatedRun>& runs) {
  std::vector<std::string> drafters;
  for (const auto& d : settings.drafters) drafters.push_back(d.string());
  const std::vector<std::string> labels = analysis::drafterLabels(drafters);
  const std::string promptsFile = settings.prompts.stem().string();

  std::vector<analysis::SummaryRun> out;
  for (const EvaluatedRun& r : runs) {
    const auto which = static_cast<std::size_t>(std::ranges::find(drafters, r.drafter) - drafters.begin());
    analysis::SummaryRun run{.drafter = which < labels.size() ? labels[which] : r.drafter,
                             .mode = modeLabel(r.mode, settings.ddtreeBudget),
                             .variant = std::string(enumName(r.variant))};
    if (r.mode == EvaluationMode::Live) run.stepCounting = std::string(enumName(settings.stepCounting));
    run.sampling = samplingLabel(settings.sampling);
    auto same = std::ranges::find_if(out, [&](const analysis::SummaryRun& o) {
      return o.drafter == run.drafter && o.mode == run.mode && o.variant == run.variant;
    });
    if (same == out.end()) same = out.insert(out.end(), std::move(run));
    same->runIds.push_back(r.runId);
    for (const ResponseSummary& response : r.responses)
      same->responses.push_back({response.promptId, response.dataset.empty() ? promptsFile : response.dataset,
                                 response.acceptance, r.sample});
  }
  return out;
}

}  // namespace dfi::engine
