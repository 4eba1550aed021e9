#include "dfi/analysis/run_metrics.h"

#include <algorithm>
#include <map>

#include "dfi/analysis/acceptance.h"
#include "dfi/analysis/statistics.h"

namespace dfi::analysis {

using session::PromptId;
using session::EvaluationMode;

std::vector<RunMetrics> computeRunMetrics(session::Reader& reader, const session::RunRecord& run) {
  std::map<EvaluationMode, std::map<PromptId, std::vector<int>>> lengths;
  reader.forEachStep(run.runId, [&](const session::StepRecord& step) {
    lengths[step.mode][step.promptId].push_back(step.acceptLength());
  });
  std::map<PromptId, std::int32_t> completionTokens;
  for (const session::PromptRecord& prompt : reader.prompts(run.runId)) completionTokens[prompt.promptId] = prompt.completionTokens;

  std::vector<RunMetrics> result;
  for (const auto& [mode, byPrompt] : lengths) {
    RunMetrics metrics{.runId = run.runId, .mode = mode};
    std::vector<ResponseAcceptance> responses;
    std::vector<int> all;
    for (const auto& [prompt, steps] : byPrompt) {
      ResponseAcceptance response{.stepAcceptLengths = steps};
      // When the engine did not record the completion length, it is the accepted tokens plus
      // the token sampled at prefill (SGLang's completion_tokens).
      const auto recorded = completionTokens.find(prompt);
      int generated = 1;
      for (int length : steps) generated += length;
      response.completionTokens = recorded != completionTokens.end() && recorded->second > 0 ? recorded->second : generated;
      metrics.perPrompt.push_back({.promptId = prompt,
                                   .steps = static_cast<std::int64_t>(steps.size()),
                                   .tau = *responseTau(response)});
      all.insert(all.end(), steps.begin(), steps.end());
      responses.push_back(std::move(response));
    }
    metrics.steps = static_cast<std::int64_t>(all.size());
    metrics.tauReference = tauReference(responses);
    if (mode == EvaluationMode::Live) metrics.tauSglang = tauSglang(responses);
    metrics.tauVllm = tauVllm(responses);
    // A block size missing from the run record still gets a histogram wide enough for its steps.
    const int blockSize = std::max(run.blockSize, all.empty() ? 0 : *std::max_element(all.begin(), all.end()));
    for (const std::int64_t count : acceptanceHistogram(all, blockSize))
      metrics.acceptHistogram.push_back(all.empty() ? 0.0 : static_cast<double>(count) / static_cast<double>(all.size()));
    result.push_back(std::move(metrics));
  }
  return result;
}

}  // namespace dfi::analysis
