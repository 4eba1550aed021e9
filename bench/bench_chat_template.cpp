// Chat template benchmark: rendering a ~32k-token conversation with the Qwen3 chat template and
// tokenising the result, against transformers' apply_chat_template (jinja2) + tokenizers
// measured in the same run by bench_chat_template_ref.py (which also writes the conversation,
// so both render the same messages). Two figures: the render alone, and render + tokenise
// (apply_chat_template(tokenize=True)); speedup > 1 means DFlash Inspector is faster. The
// benchmark fails when the ids differ from the reference's.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_size.h"
#include "dfi/tokenizer/tokenizer.h"
#include "reference_script.h"

namespace {

using Clock = std::chrono::steady_clock;
using dfi::tokenizer::ChatMessage;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void printFigure(const char* name, double dfiSeconds, double hfSeconds, const nlohmann::json& extra) {
  nlohmann::json line = {{"bench", name}, {"dfi_s", dfiSeconds}, {"hf_s", hfSeconds}, {"speedup_vs_hf", hfSeconds / dfiSeconds}};
  line.update(extra);
  std::cout << line.dump() << std::endl;
}

}  // namespace

int main() {
  const std::filesystem::path dir = std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3";
  const auto conversationPath = std::filesystem::temp_directory_path() / "dfi_bench_chat_conversation.json";
  const int repeat = dfi::bench::sized(5, 1);
  const nlohmann::json reference = dfi::bench::referenceOutput(
      std::string("'") + DFI_PYTHON + "' '" + DFI_SOURCE_DIR + "/bench/bench_chat_template_ref.py' --tokenizer-dir '" +
      dir.string() + "' --conversation-out '" + conversationPath.string() + "' --repeat " + std::to_string(repeat) +
      " --target-tokens " + std::to_string(dfi::bench::sized(32768, 1000)));

  std::vector<ChatMessage> messages;
  {
    std::ifstream in(conversationPath);
    for (const auto& m : nlohmann::json::parse(in)) messages.push_back({m["role"], m["content"]});
  }
  std::filesystem::remove(conversationPath);

  const auto tok = dfi::tokenizer::Tokenizer::fromDirectory(dir);
  const auto& chat = *tok.chatTemplate();
  const dfi::tokenizer::ChatOptions options{.addGenerationPrompt = true, .enableThinking = false};
  double renderSeconds = 1e9, totalSeconds = 1e9;
  std::string text;
  std::vector<std::int32_t> ids;
  for (int r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    text = chat.render(messages, options);
    renderSeconds = std::min(renderSeconds, secondsSince(start));
    start = Clock::now();
    ids = tok.encode(chat.render(messages, options));
    totalSeconds = std::min(totalSeconds, secondsSince(start));
  }
  const bool same = ids == reference["ids"].get<std::vector<std::int32_t>>();
  printFigure("chat_template_render_qwen3", renderSeconds, reference["render_s"],
              {{"chars", text.size()}, {"messages", messages.size()}});
  printFigure("chat_template_render_tokenize_qwen3", totalSeconds, reference["total_s"],
              {{"tokens", ids.size()}, {"ids_equal", same}});
  return same ? 0 : 1;
}
