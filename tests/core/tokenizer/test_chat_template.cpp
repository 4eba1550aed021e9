// Chat template detection and the Qwen3.5/3.6 rendering. There is no real Qwen3.5 template
// file here, so the expected strings are written from docs/qwen.md 5.4 (turn format, generation
// prompt "<think>\n" with thinking on and "<think>\n\n</think>\n\n" with it off). The Qwen3
// template is checked against transformers in test_tokenizer_oracle.
#include <gtest/gtest.h>

#include <fstream>

#include "dfi/base/error.h"
#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/tokenizer.h"

using namespace dfi::tokenizer;

namespace {

const std::filesystem::path kQwen3Config =
    std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3/tokenizer_config.json";

// The generation-prompt part of the Qwen3.5/3.6 chat_template.jinja, with the markers the
// detector needs from the rest of the template.
constexpr const char* kQwen35Tail = R"({%- for message in messages %}
    {%- if message.role == "user" %}{{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- set content = content.split('</think>')[-1].lstrip('\n') %}{# last_query_index #}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- else %}
        {{- '<think>\n' }}
    {%- endif %}
{%- endif %})";

TEST(ChatTemplate, DetectsTheRealQwen3Template) {
  EXPECT_EQ(detectChatTemplate(kQwen3Config), ChatTemplateKind::Qwen3);
}

TEST(ChatTemplate, DetectsQwen35FromJinjaText) {
  EXPECT_EQ(detectChatTemplateText(kQwen35Tail, "chat_template.jinja"), ChatTemplateKind::Qwen3_5);
}

TEST(ChatTemplate, UnknownTemplateIsRefusedNamingTheFile) {
  const std::string llama = "{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}";
  try {
    detectChatTemplateText(llama, "/models/x/tokenizer_config.json");
    FAIL() << "no error";
  } catch (const dfi::UsageError& e) {
    EXPECT_EQ(e.context().file, "/models/x/tokenizer_config.json");
    EXPECT_EQ(e.context().item, "chat_template");
  }
  // Qwen3-Thinking-2507 always opens <think> and has no switch: not one of the known kinds.
  std::string thinking2507 = kQwen35Tail;
  thinking2507 = thinking2507.substr(0, thinking2507.find("{%- if add_generation_prompt")) +
                 "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}";
  EXPECT_THROW(detectChatTemplateText(thinking2507, "t.jinja"), dfi::UsageError);
}

TEST(ChatTemplate, Qwen35GenerationPromptFollowsEnableThinking) {
  const std::vector<ChatMessage> messages{{"system", "Be brief. "}, {"user", " Hi\n"}};
  const std::string turns = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n";
  EXPECT_EQ(applyChatTemplate(ChatTemplateKind::Qwen3_5, messages, true, true), turns + "<|im_start|>assistant\n<think>\n");
  EXPECT_EQ(applyChatTemplate(ChatTemplateKind::Qwen3_5, messages, true, false),
            turns + "<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(applyChatTemplate(ChatTemplateKind::Qwen3_5, messages, false, false), turns);
}

TEST(ChatTemplate, Qwen35KeepsReasoningOnlyAfterTheLastQuery) {
  const std::vector<ChatMessage> messages{{"user", "a"},
                                          {"assistant", "<think>\nold\n</think>\n\nA1"},
                                          {"user", "b"},
                                          {"assistant", "<think>\nnew\n</think>\n\nB1"}};
  EXPECT_EQ(applyChatTemplate(ChatTemplateKind::Qwen3_5, messages, false, true),
            "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>user\nb<|im_end|>\n<|im_start|>assistant\n<think>\nnew\n</think>\n\nB1<|im_end|>\n");
}

TEST(ChatTemplate, Qwen35RaisesWhereTheTemplateRaises) {
  const std::vector<ChatMessage> lateSystem{{"user", "a"}, {"system", "s"}};
  EXPECT_THROW(applyChatTemplate(ChatTemplateKind::Qwen3_5, lateSystem, true, true), dfi::UsageError);
  const std::vector<ChatMessage> noUser{{"system", "s"}};
  EXPECT_THROW(applyChatTemplate(ChatTemplateKind::Qwen3_5, noUser, true, true), dfi::UsageError);
  const std::vector<ChatMessage> badRole{{"user", "a"}, {"robot", "b"}};
  EXPECT_THROW(applyChatTemplate(ChatTemplateKind::Qwen3_5, badRole, true, true), dfi::UsageError);
}

TEST(ChatTemplate, FindsNoTemplateInAConfigWithoutOne) {
  const auto dir = std::filesystem::temp_directory_path() / ("dfi_chat_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer_config.json") << R"({"model_max_length": 100})";
  EXPECT_FALSE(findChatTemplate(dir));
  std::ofstream(dir / "chat_template.jinja") << kQwen35Tail;  // preferred over the config
  EXPECT_EQ(findChatTemplate(dir), ChatTemplateKind::Qwen3_5);
  std::filesystem::remove_all(dir);
}

// A Llama 3 or gpt-oss target ships a template this engine cannot render: its tokenizer still
// loads (prompts given as ids, tokens shown by text), and only asking for the template fails.
TEST(ChatTemplate, AnUnknownTemplateDoesNotStopTheTokenizerLoading) {
  const auto dir = std::filesystem::temp_directory_path() / ("dfi_chat_unknown_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kQwen3Config.parent_path() / "tokenizer.json", dir / "tokenizer.json");
  std::ofstream(dir / "chat_template.jinja") << "{{ bos_token }}{% for m in messages %}<|start_header_id|>"
                                                "{{ m.role }}<|end_header_id|>{{ m.content }}<|eot_id|>{% endfor %}";
  const Tokenizer tok = Tokenizer::fromDirectory(dir);
  EXPECT_FALSE(tok.encode("def fizzbuzz(n):").empty());
  try {
    (void)tok.chatTemplate();
    FAIL() << "an unknown template must be refused when asked for";
  } catch (const dfi::UsageError& e) {
    EXPECT_EQ(e.context().file, (dir / "chat_template.jinja").string());
    EXPECT_EQ(e.context().item, "chat_template");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
