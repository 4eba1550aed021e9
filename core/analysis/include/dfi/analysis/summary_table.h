#pragma once
// The run summary (dfi/analysis/run_summary.h) as text: the table `run` and `summary` print,
// and the paired comparisons under it; the GUI's Run dialog shows the same text.

#include <span>
#include <string>

#include "dfi/analysis/run_summary.h"

namespace dfi::analysis {

std::string formatSummaryTable(std::span<const SummaryRow> rows);
std::string formatComparisons(std::span<const TauComparison> comparisons);  // "" when none

}  // namespace dfi::analysis
