#include "gate_report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "dfi/analysis/pass_bars.h"
#include "dfi/analysis/recorded_summary.h"
#include "dfi/base/error.h"

namespace dfi::eval {

int gateSession(const std::string& sessionPath, const GateOptions& options) {
  std::vector<std::string> texts = analysis::recordedPassBars(sessionPath);
  for (const std::string& bar : options.bars)
    if (std::ranges::find(texts, bar) == texts.end()) texts.push_back(bar);
  if (texts.empty())
    throw UsageError("no pass bars: give --require, or record them with `run --require`", {.file = sessionPath});
  std::vector<analysis::PassBar> bars;
  for (const std::string& text : texts) bars.push_back(analysis::parsePassBar(text));
  const auto runs = analysis::recordedSummaryRuns(sessionPath);
  const auto results = analysis::checkPassBars(bars, runs, options.strict);
  if (options.json)
    std::printf("%s\n", analysis::barResultsJson(results, options.strict)
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                            .c_str());
  else
    std::fputs(analysis::formatBarResults(results, options.strict).c_str(), stdout);
  const bool passed = std::ranges::all_of(results, &analysis::BarResult::passed);
  return passed ? 0 : kGateFailedExitCode;
}

}  // namespace dfi::eval
