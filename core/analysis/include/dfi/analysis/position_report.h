#pragma once
// Acceptance by position (position_metrics.h) as the CLI shows and exports it: a compact text
// section per (run, mode) for `dflash-eval summary`, the same figures as JSON for
// `summary --json`, and `dflash-eval export --what positions` as CSV (long form, one figure a
// line, the columns shared by the three tables) or JSON (one object per run and mode).

#include <ostream>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "dfi/analysis/position_metrics.h"
#include "dfi/session/reader.h"
#include "dfi/session/row_sink.h"

namespace dfi::analysis {

// "positions: NAME (mode, N steps, B = 16)" and three transposed tables: slot acceptance,
// tau by anchor-position bin with its 95% interval, the reliability bins with the ECE.
std::string formatPositionSection(const PositionMetrics& metrics, const std::string& runName);
// What the sections' rows mean, printed once after them.
std::string positionSectionsLegend();

nlohmann::json positionMetricsJson(const PositionMetrics& metrics);

void exportPositionMetrics(session::Reader& reader, session::ExportFormat format, std::ostream& out);

}  // namespace dfi::analysis
