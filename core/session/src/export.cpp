#include "dfi/session/export.h"

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"
#include "dfi/session/record_fields.h"
#include "dfi/session/run_metrics.h"

namespace dfi::session {
namespace {

using json = nlohmann::ordered_json;  // keeps columns in the order written

// Streams rows either as CSV lines or as the elements of one JSON array.
class RowSink {
 public:
  RowSink(std::ostream& out, ExportFormat format) : out_(out), format_(format) {
    if (format_ == ExportFormat::Json) out_ << "[";
  }
  ~RowSink() {
    if (format_ == ExportFormat::Json) out_ << (first_ ? "]\n" : "\n]\n");
  }

  // `row` is an object whose keys are the CSV columns (in insertion order for the header).
  void write(const json& row) {
    if (format_ == ExportFormat::Json) {
      // Text from the file may be invalid UTF-8 (a damaged or hand-edited session): replace it.
      out_ << (first_ ? "\n" : ",\n") << row.dump(-1, ' ', false, json::error_handler_t::replace);
    } else {
      if (first_) writeCsvLine(row, true);
      writeCsvLine(row, false);
    }
    first_ = false;
  }

 private:
  void writeCsvLine(const json& row, bool header) {
    bool firstField = true;
    for (auto it = row.begin(); it != row.end(); ++it) {
      out_ << (firstField ? "" : ",");
      firstField = false;
      if (header) {
        out_ << it.key();
        continue;
      }
      const json& v = it.value();
      out_ << csvField(v.is_string() ? v.get<std::string>() : v.is_array() ? joined(v) : v.dump());
    }
    out_ << "\n";
  }
  static std::string joined(const json& array) {
    std::string text;
    for (const json& v : array) {
      if (!text.empty()) text += ' ';
      text += v.dump();
    }
    return text;
  }
  static std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  }

  std::ostream& out_;
  ExportFormat format_;
  bool first_ = true;
};

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

void exportMetrics(Reader& reader, RowSink& sink, ExportFormat format) {
  for (const RunRecord& run : reader.runs()) {
    for (const RunMetrics& m : computeRunMetrics(reader, run)) {
      const std::string mode(enumName(m.mode));
      if (format == ExportFormat::Json) {
        json perPrompt = json::array();
        for (const PromptTau& p : m.perPrompt)
          perPrompt.push_back({{"prompt_id", p.promptId}, {"steps", p.steps}, {"tau", p.tau}});
        sink.write({{"run_id", m.runId}, {"mode", mode}, {"steps", m.steps}, {"tau_reference", m.tauReference},
                    {"tau_sglang", m.tauSglang ? json(*m.tauSglang) : json(nullptr)}, {"tau_vllm", m.tauVllm}, {"per_prompt", perPrompt},
                    {"accept_histogram", m.acceptHistogram}});
        continue;
      }
      // Long CSV: one value per line, so every metric shares the same columns.
      auto line = [&](const char* metric, std::int64_t promptId, std::int64_t bucket, const json& value) {
        json row = json::object();
        row["run_id"] = m.runId;
        row["mode"] = mode;
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
  }
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
  if (name == "metrics") return ExportWhat::Metrics;
  throw UsageError("unknown export selection '" + std::string(name) + "' (runs, steps or metrics)");
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
    case ExportWhat::Metrics:
      exportMetrics(reader, sink, format);
      break;
  }
}

}  // namespace dfi::session
