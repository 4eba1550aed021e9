#pragma once
// The navigator's data: compact summaries of runs, prompts and steps (no token arrays), built
// by one pass over a session's steps. Plain values, so a worker thread can build them with
// its own reader and hand them to the model on the GUI thread.

#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <QString>

#include "dfi/analysis/acceptance.h"
#include "dfi/session/records.h"

namespace dfi::ui {

class SessionSource;

struct NavigatorStep {
  session::StepId id = 0;
  std::int32_t index = 0;
  std::int64_t anchor = 0;
  std::int32_t acceptLength = 0;
  // Garble detectors (dfi/analysis/garble.h bits) that fired on what the drafter proposes (the
  // accepted slots and the first mismatch) and on the unreached tail, which nothing used.
  std::uint8_t proposedGarble = 0;
  std::uint8_t tailGarble = 0;
  int proposedGarbledSlots = 0;
  int garbledSlots = 0;  // anywhere in the block

  static NavigatorStep summarize(const session::StepSummary& step);
};

struct NavigatorPrompt {
  session::PromptId id = 0;
  QString dataset;
  QString text;
  QString label;  // the prompt's first words, or "prompt N" without a text
  std::vector<NavigatorStep> steps;
  analysis::AcceptanceTally acceptance;  // its tau is the prompt's
  int garbledSteps = 0;  // steps whose proposal is garbled
  // An imported run's prompt (`dflash-eval import`): the first step whose acceptance differs from
  // its reference run's on the same prompt; nullopt where they agree or for the engine's runs.
  std::optional<int> firstDivergentStep;
};

struct NavigatorRun {
  session::RunRecord record;
  std::vector<NavigatorPrompt> prompts;
  std::unordered_map<session::PromptId, int> promptRow;
  analysis::AcceptanceTally acceptance;  // every step of the run: its tau is the pooled one
  int garbledSteps = 0;  // steps whose proposal is garbled
  // Step ids grow in write order and one pass over a run is one consistent read: a step of
  // this run at or below this id is already counted (it may be reported again by a follower).
  session::StepId lastStep = 0;

  int addPrompt(session::PromptId id, QString dataset, QString text);  // returns its row
  void addStep(int promptRow, const NavigatorStep& step);
};

// The first words a user typed, from a prompt's text after its chat template (the role markers
// and the empty think block dropped): "def fizzbuzz(n):". Empty when the text has none.
QString promptFirstWords(const QString& templatedText, int maxChars = 40);
// A prompt as lists show it: its first words, else "prompt N".
QString promptLabel(session::PromptId id, const QString& templatedText);

// Marks, in every imported run, each prompt's first step whose acceptance differs from its
// reference run's (analysis/alignment.h; the acceptance lengths suffice, no tokens are read).
void markFirstDivergentSteps(std::vector<NavigatorRun>& runs);

// Reads every run, prompt and step summary from `source`. Throws dfi::Error on a bad file.
std::vector<NavigatorRun> loadNavigatorTree(SessionSource& source);

}  // namespace dfi::ui
