#include "evaluation/evaluation_common.h"

#include <algorithm>

#include "dfi/base/error.h"
#include "dfi/base/log_text.h"
#include "dfi/base/version.h"
#include "dfi/tokenizer/chat_template.h"

namespace dfi::engine {

namespace fs = std::filesystem;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::int64_t> promptIds(const PromptSpec& prompt, const std::optional<tokenizer::Tokenizer>& tokenizer,
                                    const EvaluationSettings& settings, const fs::path& promptsFile) {
  if (!prompt.ids.empty()) return {prompt.ids.begin(), prompt.ids.end()};
  if (!tokenizer)
    throw UsageError("a text prompt needs the target's tokenizer (tokenizer.json or a tiktoken rank file), which is missing; give \"ids\"",
                     {.file = promptsFile.string(), .item = "line " + std::to_string(prompt.line)});
  const tokenizer::Tokenizer& tok = *tokenizer;
  std::string text;
  if (settings.chatTemplate) {
    const auto& chat = tok.chatTemplate();
    if (!chat)
      throw UsageError("the target has no chat template (chat_template.jinja or tokenizer_config.json's "
                       "chat_template); pass --no-chat to tokenize prompts as plain text",
                       {.file = settings.target.string()});
    std::vector<tokenizer::ChatMessage> messages;
    for (const auto& m : prompt.messages) messages.push_back({m.role, m.content});
    try {
      text = chat->render(messages, {.enableThinking = settings.enableThinking, .keywords = settings.chatTemplateKwargs});
    } catch (const Error& e) {  // the template refuses this conversation: say which prompt
      throw UsageError(e.message(), {.file = promptsFile.string(), .item = "line " + std::to_string(prompt.line)});
    }
  } else {
    for (const auto& m : prompt.messages) text += m.content;
  }
  const auto ids = tok.encode(text);
  if (ids.empty())
    throw FormatError("the prompt tokenizes to nothing",
                      {.file = promptsFile.string(), .item = "line " + std::to_string(prompt.line)});
  return {ids.begin(), ids.end()};
}

std::int32_t slidingWindowOf(const modelspec::DrafterConfig& config) {
  const bool sliding = std::ranges::count(config.layerTypes, modelspec::LayerType::SlidingAttention) > 0;
  return sliding ? config.slidingWindow.value_or(0) : 0;
}

session::RunRecord runRecordOf(const LoadedModels& models, const LoadedDrafter& drafter,
                               const EvaluationSettings& settings) {
  session::RunRecord run;
  run.target = models.targetFiles.identity;
  run.drafter = drafter.identity;
  run.engineVersion = version() + " (git " + gitHash() + ")";
  for (const auto& d : settings.model.devices) run.device += (run.device.empty() ? "" : ",") + d;
  run.dtype = settings.model.dtype;
  run.blockSize = drafter.model->blockSize();
  run.slidingWindow = slidingWindowOf(drafter.model->config());
  run.startedAt = unixNow();
  return run;
}

analysis::GarbleContext garbleContextOf(const LoadedModels& models, const DFlashDrafter& drafter) {
  analysis::GarbleContext garble{drafter.config().maskTokenId, std::nullopt};
  if (models.tokenizer) garble.tokenizerVocabSize = static_cast<std::int32_t>(models.tokenizer->vocabSize());
  return garble;
}

void stampStep(session::StepRecord& step, session::RunId run, session::PromptId prompt,
               const analysis::GarbleContext& garble, const DraftVocabulary* vocabulary) {
  step.runId = run;
  step.promptId = prompt;
  step.garbleFlags = analysis::detectGarble(step.draftTokens, garble, step.anchorToken);
  if (vocabulary) step.draftVocabIds = vocabulary->draftIdsOf(step.draftTokens);
}

void TokenStringBook::note(std::span<const session::TokenId> ids) {
  for (session::TokenId id : ids)
    if (id >= 0 && known_.insert(id).second) pending_.push_back(stringOf(id));
}

void TokenStringBook::flush() {
  if (pending_.empty()) return;
  sink_.addTokenStrings(pending_);
  pending_.clear();
}

session::TokenString TokenStringBook::stringOf(session::TokenId id) const {
  if (tok_ && static_cast<std::size_t>(id) < tok_->vocabSize())
    return {id, tok_->tokenText(id), tok_->displayToken(id)};
  // No tokenizer, or a padded embedding row (the mask token, usually): no text exists.
  return {id, "", "\u27e8id " + std::to_string(id) + "\u27e9"};
}


void noteStep(TokenStringBook& book, const session::StepRecord& step) {
  book.note(std::span(&step.anchorToken, 1));
  book.note(step.draftTokens);
  book.note(step.targetTokens);
  book.note(std::span(&step.bonusToken, 1));
  book.note(step.topKIds);
}

std::vector<std::int64_t> stopTokens(const LoadedModels& models) {
  std::vector<std::int64_t> stops(models.target->config().eosTokenIds.begin(),
                                  models.target->config().eosTokenIds.end());
  if (models.tokenizer)
    for (const char* name : {"<|im_end|>", "<|endoftext|>"})
      if (auto id = models.tokenizer->tokenId(name)) stops.push_back(*id);
  return stops;
}

std::vector<PromptSpec> evaluatedPrompts(const EvaluationSettings& s) {
  PromptSet set = readPromptSet(s.prompts, {.skipMalformed = s.skipBadPrompts});
  for (const SkippedPromptLine& bad : set.skipped)
    logText("engine", LogLevel::Warn, "skipping a malformed prompt line (--skip-bad-prompts): " + bad.message);
  std::size_t multiTurn = 0;
  for (const PromptSpec& p : set.prompts) multiTurn += p.unevaluatedTurns > 0 ? 1 : 0;
  if (multiTurn > 0)
    logText("engine", LogLevel::Warn,
            s.prompts.string() + ": " + std::to_string(multiTurn) +
                " prompt(s) have several \"turns\"; only the first turn of each is evaluated");
  auto selected = selectPrompts(set.prompts, s.limit, s.shard.index, s.shard.count);
  if (selected.empty())
    logText("engine", LogLevel::Warn,
            "shard " + settings::shardText(s.shard) +
                " has no prompts (fewer prompts than shards); its session holds runs without prompts");
  return selected;
}

}  // namespace dfi::engine
