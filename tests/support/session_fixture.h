#pragma once
// A small but real session for the GUI tests and the analysis tests that compare runs, written
// with the session library's Writer:
// two drafters ("drafter-a", "drafter-b") over the same prompts, steps built from one
// deterministic "true" continuation so the records are consistent (anchors follow bonus
// tokens, accepted drafts equal the target), token strings with whitespace and a special
// token, a garbled slot, and drafter-b regressing on prompt 1.

#include <string>
#include <vector>

#include "dfi/analysis/garble.h"
#include "dfi/session/records.h"
#include "dfi/session/writer.h"

namespace dfi::fixture {

struct FixtureShape {
  int prompts = 3;
  int stepsPerPrompt = 6;
  int blockSize = 8;
  int topK = 4;
  session::MaskVariant maskVariant = session::MaskVariant::Reference;  // every run's
  int slidingWindow = 0;                                                // every run's
  std::string drafterConfigJson;                                        // every run's drafter config
  session::EvaluationMode mode = session::EvaluationMode::Live;         // every run's and step's
};

inline constexpr session::TokenId kVocabulary = 40;
inline constexpr session::TokenId kEndToken = 39;  // "<|im_end|>"

inline session::TokenId trueToken(std::int64_t position) {
  return static_cast<session::TokenId>((position * 7 + 3) % (kVocabulary - 1));
}

// How many drafts the target accepts at `step` of `prompt` for run 0 (a) or 1 (b).
inline int fixtureAccepted(int run, int prompt, int step, int slotCount) {
  const int a = (prompt * 3 + step * 5) % slotCount;
  return run == 1 && prompt == 1 ? a / 3 : a;  // drafter-b regresses on prompt 1
}

inline std::vector<session::TokenString> fixtureTokenStrings() {
  std::vector<session::TokenString> strings;
  for (session::TokenId id = 0; id < kVocabulary; ++id) {
    std::string raw = id % 5 == 0 ? " w" + std::to_string(id) : "t" + std::to_string(id);
    std::string display = id % 5 == 0 ? "\u2423w" + std::to_string(id) : raw;
    if (id == 13) raw = "\n", display = "\\n";
    if (id == kEndToken) raw = display = "<|im_end|>";
    strings.push_back({id, raw, display});
  }
  return strings;
}

inline session::StepRecord fixtureStep(int run, int prompt, int stepIndex, std::int64_t anchor, int slotCount, int topK) {
  session::StepRecord step;
  step.promptId = prompt;
  step.stepIndex = stepIndex;
  step.anchorPosition = anchor;
  step.anchorToken = trueToken(anchor);
  step.acceptedCount = fixtureAccepted(run, prompt, stepIndex, slotCount);
  step.maskVariant = "reference";
  for (int i = 0; i < slotCount; ++i) {
    const session::TokenId target = trueToken(anchor + i + 1);
    const session::TokenId draft = i < step.acceptedCount ? target : (target + 1 + i) % (kVocabulary - 1);
    step.targetTokens.push_back(target);
    step.draftTokens.push_back(draft);
    // The draft is the top-1; the target is second in the rejected slots, so its rank is 1.
    const session::TokenId others[] = {draft, draft == target ? (target + 2) % kVocabulary : target,
                                       (draft + 11) % kVocabulary, (draft + 17) % kVocabulary};
    const float probs[] = {0.55f, 0.25f, 0.1f, 0.05f};
    for (int k = 0; k < topK; ++k) {
      step.topKIds.push_back(others[k % 4]);
      step.topKProbs.push_back(probs[k % 4]);
    }
    step.garbleFlags.push_back(prompt == 2 && stepIndex == 1 && i == 3 ? analysis::kGarbleRepeatedToken : 0);
  }
  step.bonusToken = trueToken(anchor + step.acceptedCount + 1);
  return step;
}

inline std::vector<session::TokenId> fixturePromptTokens(int prompt) {
  std::vector<session::TokenId> tokens;
  for (int i = 0; i < 10 + prompt; ++i) tokens.push_back(trueToken(i));
  return tokens;
}

// Writes runs, prompts and `shape.stepsPerPrompt` steps per prompt and run; returns the run ids.
inline std::vector<session::RunId> writeFixture(session::Writer& writer, const FixtureShape& shape = {}) {
  writer.addTokenStrings(fixtureTokenStrings());
  std::vector<session::RunId> runs;
  for (int r = 0; r < 2; ++r) {
    session::RunRecord run;
    run.name = r == 0 ? "drafter-a" : "drafter-b";
    run.blockSize = shape.blockSize;
    run.mode = shape.mode;
    run.topK = shape.topK;
    run.maskVariant = shape.maskVariant;
    run.slidingWindow = shape.slidingWindow;
    run.device = "cpu";
    run.dtype = "float32";
    run.drafter.path = "/models/" + run.name;
    run.drafter.configJson = shape.drafterConfigJson;
    run.target.path = "/models/target";
    const session::RunId id = writer.addRun(run);
    runs.push_back(id);
    for (int p = 0; p < shape.prompts; ++p) {
      session::PromptRecord prompt;
      prompt.runId = id;
      prompt.promptId = p;
      prompt.dataset = p == 2 ? "humaneval" : "gsm8k";
      prompt.text = "Question " + std::to_string(p) + ": what is " + std::to_string(p + 2) + " squared?";
      prompt.promptTokens = fixturePromptTokens(p);
      writer.addPrompt(prompt);
      std::int64_t anchor = static_cast<std::int64_t>(prompt.promptTokens.size());
      for (int s = 0; s < shape.stepsPerPrompt; ++s) {
        session::StepRecord step = fixtureStep(r, p, s, anchor, shape.blockSize - 1, shape.topK);
        step.runId = id;
        step.mode = shape.mode;
        writer.addStep(step);
        anchor += step.acceptedCount + 1;
      }
    }
  }
  writer.flush();
  return runs;
}

inline void writeFixtureFile(const std::string& path, const FixtureShape& shape = {}) {
  session::Writer writer(path, {.mode = session::OpenMode::Overwrite});
  writeFixture(writer, shape);
  writer.close();
}

}  // namespace dfi::fixture
