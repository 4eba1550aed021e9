#include "dfi/session/export.h"

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/session/record_fields.h"

namespace dfi::session {
namespace {

using json = RowSink::Row;

// Keeps configuration JSON as JSON in a JSON export; a damaged value is kept as text.
json embedded(const std::string& text) {
  if (text.empty()) return json::object();
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? json(text) : parsed;
}

// Every field of a record under its table name (record_fields.h), as the stream writes it;
// a CSV leaves out the bulky ones, a JSON export embeds JSON-text fields as JSON.
template <HasFieldTable R>
json fieldsRow(const R& record, ExportFormat format) {
  json row = json::object();
  forEachField<R>([&](const auto& f) {
    if (format == ExportFormat::Csv && f.traits.bulky) return;
    const auto& value = f.get(record);
    const std::string name(f.name);
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
      if (format == ExportFormat::Json && f.traits.jsonText) {
        row[name] = embedded(value);
        return;
      }
    row[name] = json(json_detail::encodeValue(value, f.traits.binary));
  });
  return row;
}

// Derived columns: computed for the export, not stored.
json runRow(Reader& reader, const RunRecord& run, ExportFormat format) {
  json row = fieldsRow(run, format);
  row["steps"] = reader.stepCount(run.runId);
  return row;
}

json stepRow(const StepRecord& step, ExportFormat format) {
  json row = fieldsRow(step, format);
  row["accept_length"] = step.acceptLength();
  return row;
}

}  // namespace

ExportFormat parseExportFormat(std::string_view name) {
  if (name == "csv") return ExportFormat::Csv;
  if (name == "json") return ExportFormat::Json;
  throw UsageError("unknown export format '" + std::string(name) + "' (csv or json)");
}

ExportWhat parseExportWhat(std::string_view name) {
  if (name == "runs") return ExportWhat::Runs;
  if (name == "steps") return ExportWhat::Steps;
  throw UsageError("unknown export selection '" + std::string(name) + "' (runs or steps)");
}

void exportSession(Reader& reader, ExportWhat what, ExportFormat format, std::ostream& out) {
  RowSink sink(out, format);
  switch (what) {
    case ExportWhat::Runs:
      for (const RunRecord& run : reader.runs()) sink.write(runRow(reader, run, format));
      break;
    case ExportWhat::Steps:
      for (const RunRecord& run : reader.runs())
        reader.forEachStep(run.runId, [&](const StepRecord& step) { sink.write(stepRow(step, format)); });
      break;
  }
}

}  // namespace dfi::session
