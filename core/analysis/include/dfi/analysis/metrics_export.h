#pragma once
// `dflash-eval export --what metrics`: every run's metrics (run_metrics.h) as CSV or JSON,
// through the session library's row sink so that they share its formats. JSON: one object per
// (run, mode) with its per-prompt taus and histogram nested; CSV: long form, one value a line
// (run_id, mode, metric, prompt_id, bucket, value), so that every metric shares the columns.

#include <ostream>

#include "dfi/session/reader.h"
#include "dfi/session/row_sink.h"

namespace dfi::analysis {

void exportRunMetrics(session::Reader& reader, session::ExportFormat format, std::ostream& out);

}  // namespace dfi::analysis
