#include "dfi/analysis/metrics_export.h"

#include <string>

#include "dfi/analysis/run_metrics.h"
#include "dfi/session/record_fields.h"

namespace dfi::analysis {
namespace {

using json = session::RowSink::Row;

void writeJson(const RunMetrics& m, session::RowSink& sink) {
  json perPrompt = json::array();
  for (const PromptTau& p : m.perPrompt) perPrompt.push_back({{"prompt_id", p.promptId}, {"steps", p.steps}, {"tau", p.tau}});
  sink.write({{"run_id", m.runId}, {"mode", std::string(enumName(m.mode))}, {"steps", m.steps},
              {"tau_reference", m.tauReference}, {"tau_sglang", m.tauSglang ? json(*m.tauSglang) : json(nullptr)},
              {"tau_vllm", m.tauVllm}, {"per_prompt", perPrompt}, {"accept_histogram", m.acceptHistogram}});
}

void writeCsv(const RunMetrics& m, session::RowSink& sink) {
  auto line = [&](const char* metric, std::int64_t promptId, std::int64_t bucket, const json& value) {
    json row = json::object();
    row["run_id"] = m.runId;
    row["mode"] = std::string(enumName(m.mode));
    row["metric"] = metric;
    row["prompt_id"] = promptId;
    row["bucket"] = bucket;
    row["value"] = value;
    sink.write(row);
  };
  line("steps", -1, -1, m.steps);
  line("tau_reference", -1, -1, m.tauReference);
  if (m.tauSglang) line("tau_sglang", -1, -1, *m.tauSglang);
  line("tau_vllm", -1, -1, m.tauVllm);
  for (const PromptTau& p : m.perPrompt) line("tau_prompt", p.promptId, -1, p.tau);
  for (std::size_t b = 0; b < m.acceptHistogram.size(); ++b)
    line("accept_fraction", -1, static_cast<std::int64_t>(b), m.acceptHistogram[b]);
}

}  // namespace

void exportRunMetrics(session::Reader& reader, session::ExportFormat format, std::ostream& out) {
  session::RowSink sink(out, format);
  for (const session::RunRecord& run : reader.runs())
    for (const RunMetrics& m : computeRunMetrics(reader, run))
      format == session::ExportFormat::Json ? writeJson(m, sink) : writeCsv(m, sink);
}

}  // namespace dfi::analysis
