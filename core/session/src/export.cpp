#include "dfi/session/export.h"

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"

namespace dfi::session {
namespace {

using json = RowSink::Row;

// Keeps configuration JSON as JSON in a JSON export; a damaged value is kept as text.
json embedded(const std::string& text) {
  if (text.empty()) return json::object();
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? json(text) : parsed;
}

json runRow(Reader& reader, const RunRecord& run, ExportFormat format) {
  json row = json::object();
  row["run_id"] = run.runId;
  row["name"] = run.name;
  row["target_path"] = run.target.path;
  row["target_weights_sha256"] = run.target.weightsSha256;
  row["drafter_path"] = run.drafter.path;
  row["drafter_weights_sha256"] = run.drafter.weightsSha256;
  row["engine_version"] = run.engineVersion;
  row["device"] = run.device;
  row["dtype"] = run.dtype;
  row["block_size"] = run.blockSize;
  row["top_k"] = run.topK;
  row["shard"] = run.shard;
  row["started_at"] = run.startedAt;
  row["finished_at"] = run.finishedAt;
  row["steps"] = reader.stepCount(run.runId);
  if (format == ExportFormat::Json) {
    row["settings"] = embedded(run.settingsJson);
    row["timings"] = embedded(run.timingsJson);
    row["target_config"] = embedded(run.target.configJson);
    row["drafter_config"] = embedded(run.drafter.configJson);
  } else {
    row["settings_json"] = run.settingsJson;
  }
  return row;
}

json stepRow(const StepRecord& step, ExportFormat format) {
  json row = json::object();
  row["step_id"] = step.stepId;
  row["run_id"] = step.runId;
  row["prompt_id"] = step.promptId;
  row["step_index"] = step.stepIndex;
  row["mode"] = stepModeName(step.mode);
  row["anchor_position"] = step.anchorPosition;
  row["anchor_token"] = step.anchorToken;
  row["accepted_count"] = step.acceptedCount;
  row["accept_length"] = step.acceptLength();
  row["bonus_token"] = step.bonusToken;
  row["draft_tokens"] = step.draftTokens;
  row["target_tokens"] = step.targetTokens;
  row["garble_flags"] = step.garbleFlags;
  row["mask_variant"] = step.maskVariant;
  if (format == ExportFormat::Json) {
    row["topk_ids"] = step.topKIds;
    row["topk_probs"] = step.topKProbs;
  }
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
