#pragma once
// Exports a session's runs or steps as CSV or JSON (row_sink.h). Its metrics are computed and
// exported by dfi::analysis (metrics_export.h), which reads sessions through this library.

#include <ostream>
#include <string_view>

#include "dfi/session/reader.h"
#include "dfi/session/row_sink.h"

namespace dfi::session {

enum class ExportWhat { Runs, Steps };

// Throws UsageError for an unknown name.
ExportFormat parseExportFormat(std::string_view name);  // "csv", "json"
ExportWhat parseExportWhat(std::string_view name);      // "runs", "steps"

void exportSession(Reader& reader, ExportWhat what, ExportFormat format, std::ostream& out);

}  // namespace dfi::session
