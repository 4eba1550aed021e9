#pragma once
// The run summary (dfi/analysis/run_summary.h) as text: the table `run` and `summary` print,
// and the paired comparisons under it.

#include <span>
#include <string>

#include "dfi/analysis/run_summary.h"

namespace dfi::eval {

std::string formatSummaryTable(std::span<const analysis::SummaryRow> rows);
std::string formatComparisons(std::span<const analysis::TauComparison> comparisons);  // "" when none

}  // namespace dfi::eval
