// How a model directory's chat template is found and what render() passes it. What the Jinja
// engine renders is checked against transformers in test_jinja_oracle (every real template) and
// test_tokenizer_oracle (the Qwen3 tokenizer's own); here only the tokenizer's part: which text
// runs, which variables it gets, and that a broken template names its file without stopping the
// tokenizer from loading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "dfi/base/error.h"
#include "dfi/jinja/template.h"
#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/tokenizer.h"

using namespace dfi::tokenizer;

namespace {

const std::filesystem::path kQwen3Dir = std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3";

class ModelDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("dfi_chat_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
  std::filesystem::path dir;
};

constexpr const char* kEcho =
    "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% if enable_thinking is false %}<nothink>{% endif %}{% endif %}";

TEST_F(ModelDir, NoTemplateInAConfigWithoutOne) {
  write("tokenizer_config.json", R"({"model_max_length": 100})");
  EXPECT_FALSE(ChatTemplate::find(dir));
}

TEST_F(ModelDir, ChatTemplateJinjaIsPreferredOverTheConfig) {
  write("tokenizer_config.json", R"({"chat_template": "config", "bos_token": "<s>"})");
  write("chat_template.jinja", kEcho);
  const auto chat = ChatTemplate::find(dir);
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->source(), dir / "chat_template.jinja");
  const std::vector<ChatMessage> messages{{"user", "hi"}};
  EXPECT_EQ(chat->render(messages), "<s>[user]hi[assistant]");
  EXPECT_EQ(chat->render(messages, {.enableThinking = false}), "<s>[user]hi[assistant]<nothink>");
  EXPECT_EQ(chat->render(messages, {.addGenerationPrompt = false}), "<s>[user]hi");
}

// transformers takes the "default" entry of the named-template list form.
TEST_F(ModelDir, NamedTemplateListUsesDefault) {
  write("tokenizer_config.json",
        R"({"chat_template": [{"name": "tool_use", "template": "tools"}, {"name": "default", "template": "{{ messages[0].content }}!"}]})");
  const auto chat = ChatTemplate::find(dir);
  ASSERT_TRUE(chat);
  const std::vector<ChatMessage> messages{{"user", "hi"}};
  EXPECT_EQ(chat->render(messages), "hi!");
}

// Special tokens given as AddedToken objects ({"content": ...}) pass their content.
TEST_F(ModelDir, SpecialTokensComeFromTheConfigInEitherForm) {
  write("tokenizer_config.json",
        R"({"chat_template": "{{ bos_token }}|{{ eos_token }}", "bos_token": {"content": "<|begin|>", "lstrip": false}, "eos_token": "<|end|>"})");
  const auto chat = ChatTemplate::find(dir);
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->render({}), "<|begin|>|<|end|>");
}

TEST_F(ModelDir, KeywordsReachTheTemplateAndOverrideDefaults) {
  write("chat_template.jinja", "{{ reasoning_effort | default('medium') }}");
  const auto chat = ChatTemplate::find(dir);
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->render({}), "medium");
  EXPECT_EQ(chat->variablesLeftAtDefault(), std::vector<std::string>{"reasoning_effort"});
  EXPECT_EQ(chat->render({}, {.keywords = R"({"reasoning_effort": "high"})"}), "high");
  EXPECT_TRUE(chat->variablesLeftAtDefault(R"({"reasoning_effort": "high"})").empty());
  EXPECT_THROW(chat->render({}, {.keywords = R"({"enable_thinking": false})"}), dfi::UsageError);  // --thinking's
  EXPECT_THROW(chat->render({}, {.keywords = "[1]"}), dfi::UsageError);
}

TEST_F(ModelDir, RaiseExceptionIsTheTemplatesRefusal) {
  write("chat_template.jinja", "{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}ok");
  const auto chat = ChatTemplate::find(dir);
  ASSERT_TRUE(chat);
  const std::vector<ChatMessage> system{{"system", "s"}};
  try {
    (void)chat->render(system);
    FAIL() << "no error";
  } catch (const dfi::jinja::TemplateRaised& e) {
    EXPECT_NE(e.message().find("first must be user"), std::string::npos) << e.message();
  }
}

// A template this engine cannot parse: the tokenizer still loads (prompts given as ids, tokens
// shown by text), and only asking for the template fails, naming file, line and column.
TEST_F(ModelDir, ABrokenTemplateDoesNotStopTheTokenizerLoading) {
  std::filesystem::copy_file(kQwen3Dir / "tokenizer.json", dir / "tokenizer.json");
  write("chat_template.jinja", "{{ bos_token }}\n{% for m in messages %}{{ m.content }}");  // no endfor
  const Tokenizer tok = Tokenizer::fromDirectory(dir);
  EXPECT_FALSE(tok.encode("def fizzbuzz(n):").empty());
  try {
    (void)tok.chatTemplate();
    FAIL() << "a broken template must be refused when asked for";
  } catch (const dfi::jinja::TemplateSyntaxError& e) {
    EXPECT_NE(std::string(e.what()).find("chat_template.jinja"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

// A model directory without tokenizer.json or a rank file has no tokenizer (prompts are ids).
TEST_F(ModelDir, InDirectoryFindsATokenizerOnlyWhereThereIsOne) {
  write("tokenizer_config.json", R"({"chat_template": "x"})");
  EXPECT_FALSE(Tokenizer::inDirectory(dir));
  std::filesystem::copy_file(kQwen3Dir / "tokenizer.json", dir / "tokenizer.json");
  EXPECT_TRUE(Tokenizer::inDirectory(dir));
}

TEST(ChatTemplate, TheRealQwen3TemplateIsFoundInTokenizerConfig) {
  const Tokenizer tok = Tokenizer::fromDirectory(kQwen3Dir);
  ASSERT_TRUE(tok.chatTemplate());
  EXPECT_EQ(tok.chatTemplate()->source(), kQwen3Dir / "tokenizer_config.json");
}

TEST(ChatTemplate, FirstDifferenceNamesTheOffsetAndBothSides) {
  EXPECT_FALSE(firstDifference("same", "same"));
  const auto d = firstDifference("<|im_start|>assistant\n<think>\n", "<|im_start|>assistant\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->offset, 22u);
  EXPECT_EQ(d->expected, "<think>\n");
  EXPECT_EQ(d->actual, "");
}

}  // namespace
