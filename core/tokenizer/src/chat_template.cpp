#include "dfi/tokenizer/chat_template.h"

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "python_strings.h"
#include "read_file.h"

namespace dfi::tokenizer {
namespace {

constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kThinkOpen = "<think>";

bool isToolResponse(std::string_view content) {
  return content.starts_with("<tool_response>") && content.ends_with("</tool_response>");
}

// Both templates split an assistant turn written as "<think>r</think>c" into reasoning r and
// content c; what differs is the trimming around them.
struct AssistantParts {
  std::string reasoning;
  std::string content;
};

AssistantParts splitReasoning(std::string_view content) {
  if (content.find(kThinkClose) == std::string_view::npos) return {"", std::string(content)};
  const std::string_view beforeFirstClose = content.substr(0, content.find(kThinkClose));
  std::string_view reasoning = py::rstrip(beforeFirstClose, "\n");
  if (const auto open = reasoning.rfind(kThinkOpen); open != std::string_view::npos)
    reasoning = reasoning.substr(open + kThinkOpen.size());
  const std::string_view afterLastClose = content.substr(content.rfind(kThinkClose) + kThinkClose.size());
  return {std::string(py::lstrip(reasoning, "\n")), std::string(py::lstrip(afterLastClose, "\n"))};
}

// Index of the last user turn that is a real query (not a wrapped tool response); reasoning
// of assistant turns after it is kept, earlier reasoning is dropped.
std::optional<std::size_t> lastQueryIndex(std::span<const ChatMessage> messages, bool trimContent) {
  for (std::size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role != "user") continue;
    const std::string_view content = trimContent ? py::strip(messages[i].content) : std::string_view(messages[i].content);
    if (!isToolResponse(content)) return i;
  }
  return std::nullopt;
}

void appendToolTurn(std::span<const ChatMessage> messages, std::size_t i, std::string_view content, bool openIfFirst,
                    std::string& out) {
  const bool previousIsTool = i > 0 && messages[i - 1].role == "tool";
  if (!previousIsTool && (i > 0 || openIfFirst)) out += "<|im_start|>user";
  out += "\n<tool_response>\n";
  out += content;
  out += "\n</tool_response>";
  if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
}

// Qwen3 (tokenizer_config.json of the Qwen3 release), without the tools block.
std::string renderQwen3(std::span<const ChatMessage> messages, bool addGenerationPrompt, bool enableThinking) {
  std::string out;
  if (!messages.empty() && messages[0].role == "system")
    out += "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n";
  const std::size_t lastQuery = lastQueryIndex(messages, false).value_or(messages.size() - 1);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i > 0)) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "assistant") {
      const AssistantParts parts = splitReasoning(m.content);
      const bool last = i + 1 == messages.size();
      if (i > lastQuery && (last || !parts.reasoning.empty())) {
        out += "<|im_start|>assistant\n<think>\n" + std::string(py::strip(parts.reasoning, "\n")) + "\n</think>\n\n" +
               std::string(py::lstrip(parts.content, "\n"));
      } else {
        out += "<|im_start|>assistant\n" + parts.content;
      }
      out += "<|im_end|>\n";
    } else if (m.role == "tool") {
      appendToolTurn(messages, i, m.content, true, out);
    }
    // The template silently skips any other role.
  }
  if (addGenerationPrompt) {
    out += "<|im_start|>assistant\n";
    if (!enableThinking) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

// Qwen3.5 / Qwen3.6 (chat_template.jinja), without tools, images or preserve_thinking.
std::string renderQwen3_5(std::span<const ChatMessage> messages, bool addGenerationPrompt, bool enableThinking) {
  if (messages.empty()) throw UsageError("no messages provided", {.item = "messages"});
  std::string out;
  if (messages[0].role == "system") out += "<|im_start|>system\n" + std::string(py::strip(messages[0].content)) + "<|im_end|>\n";
  const auto lastQuery = lastQueryIndex(messages, true);
  if (!lastQuery) throw UsageError("no user query found in messages", {.item = "messages"});
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const std::string_view content = py::strip(m.content);
    if (m.role == "system") {
      if (i > 0) throw UsageError("a system message must be the first message", {.item = "messages/" + std::to_string(i)});
    } else if (m.role == "user") {
      out += "<|im_start|>user\n" + std::string(content) + "<|im_end|>\n";
    } else if (m.role == "assistant") {
      const AssistantParts parts = splitReasoning(content);
      if (i > *lastQuery) {
        out += "<|im_start|>assistant\n<think>\n" + std::string(py::strip(parts.reasoning)) + "\n</think>\n\n" + parts.content;
      } else {
        out += "<|im_start|>assistant\n" + parts.content;
      }
      out += "<|im_end|>\n";
    } else if (m.role == "tool") {
      // This template opens the wrapping user turn only after a non-tool message.
      appendToolTurn(messages, i, content, false, out);
    } else {
      throw UsageError("unexpected message role \"" + m.role + "\"", {.item = "messages/" + std::to_string(i)});
    }
  }
  if (addGenerationPrompt) out += enableThinking ? "<|im_start|>assistant\n<think>\n" : "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  return out;
}

// The template text with all whitespace removed, so that markers survive reformatting.
std::string squeezed(std::string_view text) {
  std::string out;
  for (const char c : text)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out.push_back(c);
  return out;
}

// The template text in `file`, or nullopt for a tokenizer_config.json without one.
std::optional<std::string> readTemplateText(const std::filesystem::path& file) {
  std::string text = detail::readWholeFile(file, "chat template file");
  if (file.extension() == ".jinja") return text;
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(std::string("not valid JSON: ") + e.what(), {.file = file.string(), .byteOffset = e.byte});
  } catch (const nlohmann::json::exception& e) {  // a number too large for a double
    throw FormatError(std::string("not valid JSON: ") + e.what(), {.file = file.string()});
  }
  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (!it->is_string())
    throw ValidationError("expected the template as a string (named template lists are not supported)",
                          {.file = file.string(), .item = "chat_template"});
  return it->get<std::string>();
}

}  // namespace

std::string applyChatTemplate(ChatTemplateKind kind, std::span<const ChatMessage> messages, bool addGenerationPrompt,
                              bool enableThinking) {
  switch (kind) {
    case ChatTemplateKind::Qwen3: return renderQwen3(messages, addGenerationPrompt, enableThinking);
    case ChatTemplateKind::Qwen3_5: return renderQwen3_5(messages, addGenerationPrompt, enableThinking);
  }
  throw UsageError("unknown chat template kind");
}

ChatTemplateKind detectChatTemplateText(std::string_view templateText, const std::filesystem::path& source) {
  const std::string t = squeezed(templateText);
  const bool chatMl = t.find("'<|im_start|>'+message.role+'\\n'") != std::string::npos;
  const bool splitsReasoning = t.find("last_query_index") != std::string::npos &&
                               t.find("split('</think>')") != std::string::npos;
  const std::string thinkingOff =
      "{{-'<|im_start|>assistant\\n'}}{%-ifenable_thinkingisdefinedandenable_thinkingisfalse%}{{-'<think>\\n\\n</think>\\n\\n'}}";
  const bool endsQwen3 = t.find(thinkingOff + "{%-endif%}{%-endif%}") != std::string::npos;
  const bool endsQwen3_5 = t.find(thinkingOff + "{%-else%}{{-'<think>\\n'}}{%-endif%}{%-endif%}") != std::string::npos;
  if (chatMl && splitsReasoning && endsQwen3) return ChatTemplateKind::Qwen3;
  if (chatMl && splitsReasoning && endsQwen3_5) return ChatTemplateKind::Qwen3_5;
  throw UsageError(
      "unknown chat template: only the Qwen3 (hybrid thinking) and Qwen3.5/3.6 ChatML templates are supported "
      "(recognised by their enable_thinking generation prompt); tokenize prompts as plain text (run --no-chat, "
      "tokenize without --chat) or give token ids",
      {.file = source.string(), .item = "chat_template"});
}

ChatTemplateKind detectChatTemplate(const std::filesystem::path& file) {
  const auto text = readTemplateText(file);
  if (!text) throw ValidationError("no chat template in this file", {.file = file.string(), .item = "chat_template"});
  return detectChatTemplateText(*text, file);
}

std::optional<ChatTemplateKind> findChatTemplate(const std::filesystem::path& dir) {
  for (const char* name : {"chat_template.jinja", "tokenizer_config.json"}) {
    const auto file = dir / name;
    if (!std::filesystem::exists(file)) continue;
    if (const auto text = readTemplateText(file)) return detectChatTemplateText(*text, file);
  }
  return std::nullopt;
}

}  // namespace dfi::tokenizer
