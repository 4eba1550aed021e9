#include "text_input.h"

#include <span>

#include "dfi/base/error.h"
#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/tokenizer.h"

namespace dfi::eval {

std::vector<std::int64_t> tokenizeInput(const std::string& modelDir, const std::string& text, bool chat,
                                        bool enableThinking) {
  const auto tok = tokenizer::Tokenizer::fromDirectory(modelDir);
  std::string input = text;
  if (chat) {
    const auto kind = tok.chatTemplate();
    if (!kind) throw UsageError("--chat: the model directory has no chat template", {.file = modelDir});
    const tokenizer::ChatMessage message{"user", text};
    input = tokenizer::applyChatTemplate(*kind, std::span(&message, 1), true, enableThinking);
  }
  const std::vector<std::int32_t> ids = tok.encode(input);
  return {ids.begin(), ids.end()};
}

}  // namespace dfi::eval
