#include "evaluation/diagnosis/template_lint.h"

#include <fstream>
#include <iterator>

#include "dfi/base/error.h"
#include "dfi/tokenizer/chat_template.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;
using analysis::LintFinding;
using analysis::LintSeverity;

std::string listedNames(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text;
}

// The template the drafter's training data was rendered with: --training-template, else the
// one its checkpoint ships (training packages save the tokenizer files beside the weights).
std::optional<tokenizer::ChatTemplate> trainingTemplate(const BatteryInputs& in, const fs::path& drafterDir,
                                                        const tokenizer::ChatTemplate& target) {
  if (const auto& file = in.settings.trainingTemplate) {
    std::ifstream f(*file, std::ios::binary);
    if (!f) throw IoError("cannot read the training chat template", {.file = file->string()});
    const std::string text(std::istreambuf_iterator<char>(f), {});
    return tokenizer::ChatTemplate::fromText(text, *file, target.specialTokens());
  }
  return tokenizer::ChatTemplate::find(drafterDir);
}

}  // namespace

std::vector<LintFinding> templateLint(const BatteryInputs& in, const fs::path& drafterDir) {
  const EvaluationSettings& e = in.settings.evaluation;
  if (!e.chatTemplate || !in.tokenizer || in.prompts.empty() || !in.prompts.front().ids.empty()) return {};
  const auto& target = in.tokenizer->chatTemplate();
  if (!target) return {};
  std::vector<LintFinding> out;

  if (const auto left = target->variablesLeftAtDefault(e.chatTemplateKwargs); !left.empty())
    out.push_back({LintSeverity::Info, "template-defaults", target->source().string(),
                   "the chat template also reads " + listedNames(left) +
                       ", which this run leaves at the template's own defaults (as transformers does unless they "
                       "are passed): if training or serving set them, their prompts differ from these."});

  const auto training = trainingTemplate(in, drafterDir, *target);
  if (!training) return out;
  std::vector<tokenizer::ChatMessage> messages;
  for (const auto& m : in.prompts.front().messages) messages.push_back({m.role, m.content});
  const tokenizer::ChatOptions options{.enableThinking = e.enableThinking, .keywords = e.chatTemplateKwargs};
  try {
    const std::string trained = training->render(messages, options), evaluated = target->render(messages, options);
    if (const auto diff = tokenizer::firstDifference(trained, evaluated))
      out.push_back({LintSeverity::Warning, "training-template-differs", training->source().string(),
                     "the drafter's training format renders the first prompt differently from the target's chat "
                     "template (" + target->source().string() + ") from byte " + std::to_string(diff->offset) +
                         ": training \"" + diff->expected + "\", evaluation \"" + diff->actual +
                         "\". A drafter evaluated on another prompt format than it was trained on drafts worse."});
  } catch (const Error& err) {  // a template that refuses the conversation is a finding, not a crash
    out.push_back({LintSeverity::Warning, "training-template-differs", training->source().string(),
                   std::string("the drafter's training format or the target's template cannot render the first "
                               "prompt: ") + err.what()});
  }
  return out;
}

}  // namespace dfi::engine
