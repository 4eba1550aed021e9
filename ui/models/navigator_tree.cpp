#include "models/navigator_tree.h"

#include <algorithm>

#include <QRegularExpression>

#include "session/session_source.h"
#include "dfi/analysis/alignment.h"

namespace dfi::ui {

NavigatorStep NavigatorStep::summarize(const session::StepSummary& step) {
  return {step.stepId,         step.stepIndex,  step.anchorPosition,       step.acceptLength(),
          step.proposedGarble, step.tailGarble, step.proposedGarbledSlots, step.garbledSlots};
}

QString promptFirstWords(const QString& templatedText, int maxChars) {
  // Chat-template markers (<|im_start|>, <|start_header_id|>, <|message|>, ...) and think tags
  // become line breaks, so a role name ends up alone on its line.
  static const QRegularExpression markers(QStringLiteral("<\\|[^|>]*\\|>|</?think>"));
  QString text = templatedText;
  text.replace(markers, QStringLiteral("\n"));
  QStringList lines = text.split(QLatin1Char('\n'));
  // The user's turn when the template names one: what follows its role line.
  static const QStringList roles = {QStringLiteral("system"), QStringLiteral("user"), QStringLiteral("assistant"),
                                    QStringLiteral("developer")};
  if (const auto user = lines.indexOf(QStringLiteral("user")); user >= 0) lines = lines.mid(user + 1);
  QStringList words;
  for (const QString& line : lines) {
    if (roles.contains(line.trimmed())) break;  // the next turn
    words << line.simplified();
  }
  QString first = words.join(QLatin1Char(' ')).simplified();
  if (first.size() > maxChars) {
    first.truncate(maxChars);
    if (const qsizetype space = first.lastIndexOf(QLatin1Char(' ')); space > maxChars / 2) first.truncate(space);
    first += QStringLiteral("\u2026");
  }
  return first;
}

QString promptLabel(session::PromptId id, const QString& templatedText) {
  const QString words = promptFirstWords(templatedText);
  return words.isEmpty() ? QObject::tr("prompt %1").arg(id) : words;
}

int NavigatorRun::addPrompt(session::PromptId id, QString dataset, QString text) {
  if (auto it = promptRow.find(id); it != promptRow.end()) return it->second;
  const int row = static_cast<int>(prompts.size());
  QString label = promptLabel(id, text);
  prompts.push_back({id, std::move(dataset), std::move(text), std::move(label), {}, {}, 0});
  promptRow.emplace(id, row);
  return row;
}

void NavigatorRun::addStep(int row, const NavigatorStep& step) {
  NavigatorPrompt& prompt = prompts[static_cast<std::size_t>(row)];
  prompt.steps.push_back(step);
  prompt.acceptance.add(step.acceptLength);
  prompt.garbledSteps += step.proposedGarble != 0;
  acceptance.add(step.acceptLength);
  garbledSteps += step.proposedGarble != 0;
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
  markFirstDivergentSteps(runs);
  return runs;
}

void markFirstDivergentSteps(std::vector<NavigatorRun>& runs) {
  auto lengths = [](const NavigatorPrompt& prompt) {
    analysis::ResponseTrace trace;
    for (const NavigatorStep& step : prompt.steps) trace.acceptLengths.push_back(step.acceptLength);
    return trace;
  };
  for (NavigatorRun& run : runs) {
    const auto import = analysis::importAlignment(run.record);
    // Histogram-only imports (vLLM, SGLang) have no step order: their steps align with nothing.
    if (!import || !import->stepOrderRecorded) continue;
    const auto reference =
        std::ranges::find_if(runs, [&](const NavigatorRun& r) { return r.record.runId == import->referenceRun; });
    if (reference == runs.end()) continue;
    for (NavigatorPrompt& prompt : run.prompts) {
      const auto row = reference->promptRow.find(prompt.id);
      if (row == reference->promptRow.end()) continue;
      prompt.firstDivergentStep =
          analysis::alignResponse(prompt.id, lengths(reference->prompts[static_cast<std::size_t>(row->second)]),
                                  lengths(prompt))
              .firstStep;
    }
  }
}

}  // namespace dfi::ui
