#include "models/navigator_tree.h"

#include <algorithm>

#include "context/session_source.h"

namespace dfi::ui {

NavigatorStep NavigatorStep::summarize(const session::StepSummary& step) {
  return {step.stepId, step.stepIndex, step.anchorPosition, step.acceptLength(), step.garbledSlots};
}

int NavigatorRun::addPrompt(session::PromptId id, QString dataset, QString text) {
  if (auto it = promptRow.find(id); it != promptRow.end()) return it->second;
  const int row = static_cast<int>(prompts.size());
  prompts.push_back({id, std::move(dataset), std::move(text), {}, {}, 0});
  promptRow.emplace(id, row);
  return row;
}

void NavigatorRun::addStep(int row, const NavigatorStep& step) {
  NavigatorPrompt& prompt = prompts[static_cast<std::size_t>(row)];
  prompt.steps.push_back(step);
  prompt.acceptance.add(step.acceptLength);
  prompt.garbledSteps += step.garbledSlots > 0;
  acceptance.add(step.acceptLength);
  garbledSteps += step.garbledSlots > 0;
  lastStep = std::max(lastStep, step.id);
}

std::vector<NavigatorRun> loadNavigatorTree(SessionSource& source) {
  std::vector<NavigatorRun> runs;
  for (session::RunRecord& record : source.runs()) {
    NavigatorRun run;
    run.record = std::move(record);
    for (const session::PromptRecord& p : source.prompts(run.record.runId))
      run.addPrompt(p.promptId, QString::fromStdString(p.dataset), QString::fromStdString(p.text));
    // Steps of prompts the file does not list are kept too, under a bare prompt row.
    source.forEachStepSummary(run.record.runId, [&run](const session::StepSummary& s) {
      run.addStep(run.addPrompt(s.promptId, {}, {}), NavigatorStep::summarize(s));
    });
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace dfi::ui
