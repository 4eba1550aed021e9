#pragma once
// What the evaluation (`run`) and the diagnosis (`diagnose`) share: prompts to token ids, stop
// tokens, the strings of the token ids a session shows, and the clock.

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "dfi/analysis/garble.h"
#include "dfi/engine/evaluation.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/tokenizer/tokenizer.h"
#include "evaluation/evaluation_models.h"

namespace dfi::engine {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d);
double unixNow();

// The prompt's token ids: its "ids", or its messages through the target's chat template (as
// the settings ask: template or plain text, thinking on or off).
std::vector<std::int64_t> promptIds(const PromptSpec& prompt, const std::optional<tokenizer::Tokenizer>& tokenizer,
                                    const EvaluationSettings& settings, const std::filesystem::path& promptsFile);

// The window of the drafter's sliding-attention layers, 0 when it has none: what a mask
// picture of the run must use.
std::int32_t slidingWindowOf(const modelspec::DrafterConfig& config);

// A run of `drafter` as every evaluation records it: both models' identities, this engine, the
// devices and dtype, the drafter's block size and window, started now. The caller adds its name,
// mode, variant and the rest.
session::RunRecord runRecordOf(const LoadedModels& models, const LoadedDrafter& drafter,
                               const EvaluationSettings& settings);

// What the garble detectors know of this drafter's vocabulary: its mask token, and the ids the
// tokenizer has.
analysis::GarbleContext garbleContextOf(const LoadedModels& models, const DFlashDrafter& drafter);

// What every recorded step carries beside the drafter's output, for `run` and `diagnose` alike:
// its run and prompt, the garble detectors' flags and, with a reduced draft vocabulary, its
// drafts' draft ids.
void stampStep(session::StepRecord& step, session::RunId run, session::PromptId prompt,
               const analysis::GarbleContext& garble, const DraftVocabulary* vocabulary);

// Adds the strings of token ids the session has not seen yet, so a reader needs no tokenizer.
class TokenStringBook {
 public:
  TokenStringBook(const std::optional<tokenizer::Tokenizer>& tok, RecordSink& sink) : tok_(tok), sink_(sink) {}

  void note(std::span<const session::TokenId> ids);
  void flush();

 private:
  session::TokenString stringOf(session::TokenId id) const;

  const std::optional<tokenizer::Tokenizer>& tok_;
  RecordSink& sink_;
  std::set<session::TokenId> known_;
  std::vector<session::TokenString> pending_;
};

void noteStep(TokenStringBook& book, const session::StepRecord& step);

// The target's end-of-sequence ids and the chat stop tokens its tokenizer knows.
std::vector<std::int64_t> stopTokens(const LoadedModels& models);

// The prompts this process evaluates; skipped lines and unevaluated turns are warned about.
std::vector<PromptSpec> evaluatedPrompts(const EvaluationSettings& s);

}  // namespace dfi::engine
