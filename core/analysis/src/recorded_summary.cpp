#include "dfi/analysis/recorded_summary.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "dfi/base/error.h"
#include "dfi/session/reader.h"
#include "dfi/session/record_fields.h"
#include "dfi/settings/settings.h"
#include "dfi/settings/settings_fields.h"

namespace dfi::analysis {
namespace {

// What makes two recorded runs parts of one: every setting but the shard, the drafter, the
// mode and the mask variant. An imported run is a row of its own: two imports of one file are
// two measurements, and their settings hold little of what an evaluation's do.
std::string runKey(settings::RunSettings settings, const session::RunRecord& run) {
  settings.shard = {};
  const std::string imported = run.origin.empty() ? "" : "\nimported run " + std::to_string(run.runId);
  return settings::settingsJson(settings) + "\n" + run.drafter.path + "\n" + std::string(enumName(run.mode)) + "\n" +
         std::string(enumName(run.maskVariant)) + imported;
}

}  // namespace

std::map<std::string, std::string> drafterLabelsByPath(std::span<const session::RunRecord> runs) {
  std::vector<std::string> drafters;
  for (const auto& r : runs)
    if (std::ranges::find(drafters, r.drafter.path) == drafters.end()) drafters.push_back(r.drafter.path);
  const auto labels = drafterLabels(drafters);
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < drafters.size(); ++i) out[drafters[i]] = labels[i];
  return out;
}

std::vector<SummaryRun> recordedSummaryRuns(const RecordedRuns& recorded) {
  const auto labels = drafterLabelsByPath(recorded.runs);

  std::vector<SummaryRun> out;
  std::map<std::string, std::size_t> byKey;
  for (const session::RunRecord& record : recorded.runs) {
    // A diagnosis's runs (its baseline and each hypothesis) are read by their diagnosis
    // (readDiagnoses), never pooled with the drafter's own runs.
    if (!record.hypothesis.empty()) continue;
    settings::RunSettings settings;
    try {
      settings = settings::recordedRunSettings(record.settingsJson);
      // Runs recorded before the option counted every block in full.
      if (record.settingsJson.find("\"" + std::string(fieldName(&settings::RunSettings::stepCounting)) + "\"") ==
          std::string::npos)
        settings.stepCounting = settings::StepCounting::FullBlocks;
    } catch (const Error& e) {
      throw FormatError(std::string("a run's settings are not an evaluation's: ") + e.what(),
                        {.file = recorded.file, .item = "runs: " + record.name + ": settings_json"});
    }
    const std::string mode(enumName(record.mode));
    const auto [it, fresh] = byKey.try_emplace(runKey(settings, record), out.size());
    if (fresh) {
      out.push_back({labels.at(record.drafter.path),
                     record.mode == session::EvaluationMode::DDTree ? mode + "-" + std::to_string(settings.ddtreeBudget)
                                                                    : mode,
                     std::string(enumName(record.maskVariant)),
                     {},
                     record.mode == session::EvaluationMode::Live ? std::string(enumName(settings.stepCounting))
                                                                  : std::string(),
                     settings::samplingLabel(settings.sampling)});
    }
    SummaryRun& run = out[it->second];
    run.runIds.push_back(record.runId);
    const std::string promptsFile = settings.prompts.stem().string();
    std::map<session::PromptId, std::size_t> index;
    for (const session::PromptRecord& prompt : recorded.prompts(record.runId)) {
      index[prompt.promptId] = run.responses.size();
      run.responses.push_back({prompt.promptId, prompt.dataset.empty() ? promptsFile : prompt.dataset,
                               {{}, prompt.completionTokens}, record.sample});
    }
    recorded.forEachStepSummary(record.runId, [&](const session::StepSummary& step) {
      run.responses.at(index.at(step.promptId)).acceptance.stepAcceptLengths.push_back(step.acceptLength());
    });
  }
  return out;
}

std::vector<SummaryRun> recordedSummaryRuns(const std::string& sessionPath) {
  session::Reader reader(sessionPath);
  const std::vector<session::RunRecord> runs = reader.runs();
  return recordedSummaryRuns({.runs = runs,
                              .prompts = [&](session::RunId run) { return reader.prompts(run); },
                              .forEachStepSummary = [&](session::RunId run, const auto& visit) {
                                reader.forEachStepSummary(run, visit);
                              },
                              .file = sessionPath});
}

std::vector<NamedPositionMetrics> recordedPositionMetrics(const std::string& sessionPath) {
  session::Reader reader(sessionPath);
  std::vector<NamedPositionMetrics> out;
  for (const session::RunRecord& run : reader.runs()) {
    if (!run.hypothesis.empty()) continue;  // a diagnosis's run, as in recordedSummaryRuns
    for (PositionMetrics& m : computePositionMetrics(reader, run))
      out.push_back({run.name.empty() ? "run " + std::to_string(run.runId) : run.name, std::move(m)});
  }
  return out;
}

}  // namespace dfi::analysis
