#include "recorded_summary.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/engine/sampling.h"
#include "dfi/protocol/message_fields.h"
#include "dfi/session/reader.h"
#include "dfi/session/record_fields.h"

namespace dfi::eval {
namespace {

// What makes two recorded runs parts of one: every setting but the shard, the drafter, the
// mode and the mask variant.
std::string runKey(nlohmann::json settings, const session::RunRecord& run) {
  settings.erase(std::string(fieldName(&session::RunRecord::shard)));
  return settings.dump() + "\n" + run.drafter.path + "\n" + std::string(enumName(run.mode)) + "\n" +
         std::string(enumName(run.maskVariant));
}

// A run's settings_json is the run options' JSON (message_fields.h); older files spell the two
// options read here the same way.
template <typename Value>
std::string optionName(Value protocol::RunOptions::*member) {
  return std::string(fieldName(member));
}

}  // namespace

std::vector<SummaryRun> recordedSummaryRuns(const std::string& sessionPath) {
  session::Reader reader(sessionPath);
  const auto records = reader.runs();
  std::vector<std::string> drafters;
  for (const auto& r : records)
    if (std::ranges::find(drafters, r.drafter.path) == drafters.end()) drafters.push_back(r.drafter.path);
  const auto labels = drafterLabels(drafters);

  std::vector<SummaryRun> out;
  std::map<std::string, std::size_t> byKey;
  for (const session::RunRecord& record : records) {
    nlohmann::json settings;
    try {
      settings = nlohmann::json::parse(record.settingsJson);
      const std::string mode(enumName(record.mode));
      const auto [it, fresh] = byKey.try_emplace(runKey(settings, record), out.size());
      if (fresh) {
        const auto which = std::ranges::find(drafters, record.drafter.path) - drafters.begin();
        out.push_back({labels.at(static_cast<std::size_t>(which)),
                       record.mode == session::EvaluationMode::DDTree
                           ? mode + "-" + std::to_string(settings.at(optionName(&protocol::RunOptions::ddtreeBudget)).get<int>())
                           : mode,
                       std::string(enumName(record.maskVariant)),
                       {},
                       // Runs recorded before the option counted every block in full.
                       record.mode == session::EvaluationMode::Live
                           ? settings.value(optionName(&protocol::RunOptions::stepCounting), std::string("full-blocks"))
                           : std::string(),
                       engine::samplingLabel(
                           {settings.value(optionName(&protocol::RunOptions::temperature), 0.0),
                            settings.value(optionName(&protocol::RunOptions::topP), 1.0),
                            settings.value(optionName(&protocol::RunOptions::topK), 0)})});
      }
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(std::string("a run's settings are not an evaluation's: ") + e.what(),
                        {.file = sessionPath, .item = "runs: " + record.name + ": settings_json"});
    }
    SummaryRun& run = out[byKey.at(runKey(settings, record))];
    const std::string promptsFile =
        std::filesystem::path(settings.value(optionName(&protocol::RunOptions::prompts), std::string())).stem().string();
    std::map<session::PromptId, std::size_t> index;
    for (const session::PromptRecord& prompt : reader.prompts(record.runId)) {
      index[prompt.promptId] = run.responses.size();
      run.responses.push_back({prompt.promptId, prompt.dataset.empty() ? promptsFile : prompt.dataset,
                               {{}, prompt.completionTokens}, record.sample});
    }
    reader.forEachStepSummary(record.runId, [&](const session::StepSummary& step) {
      run.responses.at(index.at(step.promptId)).acceptance.stepAcceptLengths.push_back(step.acceptLength());
    });
  }
  return out;
}

std::vector<NamedPositionMetrics> recordedPositionMetrics(const std::string& sessionPath) {
  session::Reader reader(sessionPath);
  std::vector<NamedPositionMetrics> out;
  for (const session::RunRecord& run : reader.runs())
    for (analysis::PositionMetrics& m : analysis::computePositionMetrics(reader, run))
      out.push_back({run.name.empty() ? "run " + std::to_string(run.runId) : run.name, std::move(m)});
  return out;
}

}  // namespace dfi::eval
