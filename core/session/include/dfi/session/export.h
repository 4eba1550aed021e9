#pragma once
// Exports a session's runs, steps or metrics as CSV (one header line, RFC 4180 quoting) or
// JSON (an array of objects, streamed so that large sessions do not build it in memory).

#include <ostream>
#include <string_view>

#include "dfi/session/reader.h"

namespace dfi::session {

enum class ExportFormat { Csv, Json };
enum class ExportWhat { Runs, Steps, Metrics };

// Throws UsageError for an unknown name.
ExportFormat parseExportFormat(std::string_view name);  // "csv", "json"
ExportWhat parseExportWhat(std::string_view name);      // "runs", "steps", "metrics"

void exportSession(Reader& reader, ExportWhat what, ExportFormat format, std::ostream& out);

}  // namespace dfi::session
