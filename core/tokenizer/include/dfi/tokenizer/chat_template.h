#pragma once
// The Qwen ChatML chat templates, rendered natively (no Jinja engine): a template file is
// recognised by markers in its text and mapped to one of the known kinds, an unknown one is
// refused. Qwen3: the hybrid-thinking template of the Qwen3 release (enable_thinking=false
// appends an empty think block). Qwen3_5: Qwen3.5/3.6 (the generation prompt always opens a
// think block, empty and closed when thinking is off).

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dfi::tokenizer {

enum class ChatTemplateKind { Qwen3, Qwen3_5 };

struct ChatMessage {
  std::string role;     // system, user, assistant, tool
  std::string content;  // an assistant's may hold <think>...</think> reasoning
};

// Renders `messages` as the template would with tools absent. Throws UsageError where the
// template itself raises (Qwen3_5: a misplaced system message, an unknown role, no user turn).
std::string applyChatTemplate(ChatTemplateKind kind, std::span<const ChatMessage> messages, bool addGenerationPrompt,
                              bool enableThinking);

// Identifies the template text; `source` only names the file in the error for an unknown one.
ChatTemplateKind detectChatTemplateText(std::string_view templateText, const std::filesystem::path& source);
// Reads a tokenizer_config.json (its "chat_template" field) or a chat_template.jinja file.
ChatTemplateKind detectChatTemplate(const std::filesystem::path& file);

// The template of a model directory: chat_template.jinja if present (transformers prefers it),
// else tokenizer_config.json's chat_template; nullopt when neither has one.
std::optional<ChatTemplateKind> findChatTemplate(const std::filesystem::path& dir);

}  // namespace dfi::tokenizer
