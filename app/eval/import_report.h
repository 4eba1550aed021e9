#pragma once
// What `dflash-eval import` prints once the other pipeline's records are in the session: a
// verdict per prompt against the engine's reference run, tau of both sides in the z-lab
// convention with the paired difference (analysis/run_comparison.h, the compare view's
// numbers), and where the divergent prompts diverge. Torch-free.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/analysis/alignment.h"
#include "dfi/analysis/run_comparison.h"

namespace dfi::eval {

struct ImportReport {
  session::RunId referenceRun = 0, importedRun = 0;
  std::string origin;
  std::vector<analysis::ResponseAlignment> responses;  // by prompt id
  analysis::SeriesStatistics reference, imported;
  analysis::PairComparison pair;  // A: reference, B: imported
  std::vector<std::string> ignoredFields;
};

// Reads both runs back from the session and aligns every imported prompt with the reference.
ImportReport buildImportReport(const std::string& sessionPath, session::RunId referenceRun,
                               session::RunId importedRun, const std::vector<analysis::ResponseTrace>& importedTraces,
                               const std::vector<session::PromptId>& importedPrompts);

std::string formatImportReport(const ImportReport& report);
nlohmann::json importReportJson(const ImportReport& report);

}  // namespace dfi::eval
