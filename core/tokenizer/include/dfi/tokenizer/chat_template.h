#pragma once
// A model's chat template, rendered as transformers' apply_chat_template renders it: the
// template text that runs is the model's own (chat_template.jinja, else tokenizer_config.json's
// "chat_template", a string or the "default" of its named list), rendered by the Jinja engine
// (dfi/jinja) with the variables transformers passes: `messages`, `tools` and `documents`
// (none), `add_generation_prompt`, the tokenizer's named special tokens (bos_token, eos_token,
// unk_token, sep_token, pad_token, cls_token, mask_token, as tokenizer_config.json and
// special_tokens_map.json set them) and every keyword the user gives (enable_thinking,
// reasoning_effort, ...), which override a special token of the same name.

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dfi::tokenizer {

struct ChatMessage {
  std::string role;     // system, user, assistant, tool
  std::string content;  // an assistant's may hold <think>...</think> reasoning
};

struct ChatOptions {
  bool addGenerationPrompt = true;
  bool enableThinking = true;  // passed as the enable_thinking keyword (templates without it ignore it)
  // Further keywords as a JSON object, as apply_chat_template(**kwargs) and vLLM's
  // chat_template_kwargs take them: {"reasoning_effort": "high"}. Empty: none.
  std::string_view keywords;
};

class ChatTemplate {
 public:
  // Parses the template (jinja::TemplateSyntaxError names `source`, line and column).
  // `specialTokens`: (name, text) of the tokenizer's named special tokens.
  static ChatTemplate fromText(std::string_view text, const std::filesystem::path& source,
                               std::vector<std::pair<std::string, std::string>> specialTokens = {});
  // The template of a model directory: chat_template.jinja if present (transformers prefers it),
  // else tokenizer_config.json's chat_template; nullopt when neither has one. Throws IoError,
  // FormatError or ValidationError naming the file and field, and TemplateSyntaxError.
  static std::optional<ChatTemplate> find(const std::filesystem::path& dir);

  // Throws UsageError when options.keywords is not a JSON object or names a variable render() sets itself (messages,
  // tools, documents, add_generation_prompt, enable_thinking: each has its own option).
  // Throws jinja::TemplateRaised where the template itself refuses the conversation (its
  // raise_exception message) and jinja::RenderError where jinja2 would fail too; both name the
  // template file.
  std::string render(std::span<const ChatMessage> messages, const ChatOptions& options = {}) const;

  // The variables the template reads that a render leaves to the template's own default: those
  // it reads minus what render() passes (messages, tools, documents, add_generation_prompt,
  // enable_thinking, the special tokens and `keywords`' names). E.g. gpt-oss's reasoning_effort.
  std::vector<std::string> variablesLeftAtDefault(std::string_view keywords = {}) const;

  const std::filesystem::path& source() const;
  // (name, text) of the special tokens it passes, in transformers' order.
  const std::vector<std::pair<std::string, std::string>>& specialTokens() const;

  struct Parsed;

 private:
  explicit ChatTemplate(std::shared_ptr<const Parsed> parsed) : parsed_(std::move(parsed)) {}
  std::shared_ptr<const Parsed> parsed_;
};

// The first character at which two renderings differ: its byte offset and a short excerpt of
// each side from there (for a lint that compares a training format with the target's template).
struct RenderingDifference {
  std::size_t offset = 0;
  std::string expected, actual;  // up to 40 bytes of each from `offset`, whole characters
};
std::optional<RenderingDifference> firstDifference(std::string_view expected, std::string_view actual);

}  // namespace dfi::tokenizer
