// libFuzzer target for dfi_tokenizer: encodes arbitrary bytes with a small byte-level BPE
// tokenizer (built here: all 256 byte symbols, merges of letter pairs and triples, the Qwen3.5
// split regex, NFC, ChatML added tokens) and checks that
//   - invalid UTF-8 is refused with dfi::FormatError, never a crash;
//   - text already in NFC decodes back to itself;
//   - decoding the input read as token ids gives valid UTF-8, and streaming it through the
//     IncrementalDecoder gives the same text;
//   - display forms are valid UTF-8, and chat templates render any text as message content.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "dfi/base/error.h"
#include "dfi/tokenizer/byte_level.h"
#include "dfi/tokenizer/chat_template.h"
#include "dfi/tokenizer/display_token.h"
#include "dfi/tokenizer/incremental_decoder.h"
#include "dfi/tokenizer/tokenizer.h"
#include "dfi/base/utf8.h"

namespace {

using dfi::tokenizer::Tokenizer;

std::string symbol(unsigned char byte) {
  std::string s;
  dfi::utf8::appendCodePoint(dfi::tokenizer::byteToCodePoint(byte), s);
  return s;
}

nlohmann::json smallTokenizerJson() {
  nlohmann::json vocab = nlohmann::json::object();
  nlohmann::json merges = nlohmann::json::array();
  std::int32_t next = 0;
  for (int b = 0; b < 256; ++b) vocab[symbol(static_cast<unsigned char>(b))] = next++;
  auto addMerge = [&](const std::string& a, const std::string& b) {
    if (!vocab.contains(a + b)) vocab[a + b] = next++;
    merges.push_back({a, b});
  };
  const std::string letters = "etaoinshrdlu";
  for (const char a : letters)
    for (const char b : letters) addMerge(std::string(1, a), std::string(1, b));
  for (const char a : letters) addMerge(symbol(' '), std::string(1, a));
  for (const char a : letters) addMerge(symbol(' ') + a, "th");
  addMerge(symbol('\n'), symbol('\n'));
  addMerge(symbol(' '), symbol(' '));
  addMerge(symbol(' ') + symbol(' '), symbol(' ') + symbol(' '));
  nlohmann::json added = nlohmann::json::array();
  for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"})
    added.push_back({{"id", next++}, {"content", special}, {"special", true}});
  for (const char* plain : {"<think>", "</think>"}) added.push_back({{"id", next++}, {"content", plain}, {"special", false}});
  const char* regex =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
      "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  return {
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
      {"added_tokens", added},
  };
}

const Tokenizer& tokenizer() {
  static const Tokenizer tok = [] {
    const auto path = std::filesystem::temp_directory_path() / ("dfi_fuzz_tokenizer_" + std::to_string(getpid()) + ".json");
    std::ofstream(path) << smallTokenizerJson().dump();
    Tokenizer loaded = Tokenizer::fromFile(path);
    std::filesystem::remove(path);
    return loaded;
  }();
  return tok;
}

// A ChatML template as Qwen's render it (the real ones are checked against transformers in
// test_jinja_oracle): any text must render as message content, never as template syntax.
const dfi::tokenizer::ChatTemplate& chatMl() {
  static const auto chat = dfi::tokenizer::ChatTemplate::fromText(
      "{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}"
      "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
      "{%- if enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}",
      "chatml.jinja");
  return chat;
}

bool isNfc(const std::string& text) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  const bool same = n >= 0 && std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n)) == text;
  std::free(out);
  return same;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Tokenizer& tok = tokenizer();
  const std::string text(reinterpret_cast<const char*>(data), size);

  if (dfi::utf8::firstInvalidByte(text)) {
    try {
      tok.encode(text);
      std::abort();  // invalid UTF-8 must be refused
    } catch (const dfi::FormatError&) {
    }
  } else {
    const auto ids = tok.encode(text);
    if (isNfc(text) && tok.decode(ids) != text) std::abort();
    const std::vector<dfi::tokenizer::ChatMessage> messages{{"user", "q"}, {"assistant", text}, {"user", text}};
    const std::string prompt = chatMl().render(messages, {.enableThinking = size % 2 == 0});
    if (prompt.find("<|im_start|>user\nq") == std::string::npos) std::abort();
  }
  if (dfi::utf8::firstInvalidByte(dfi::tokenizer::displayBytes(text))) std::abort();

  std::vector<std::int32_t> ids(size / 4);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= static_cast<std::uint32_t>(data[i * 4 + b]) << (8 * b);
    ids[i] = static_cast<std::int32_t>(v % 1200) - 100;  // mostly known ids, some unknown
  }
  for (const bool skip : {false, true}) {
    const std::string decoded = tok.decode(ids, skip);
    if (dfi::utf8::firstInvalidByte(decoded)) std::abort();
    for (const auto id : ids)
      if (dfi::utf8::firstInvalidByte(tok.displayToken(id))) std::abort();
    dfi::tokenizer::IncrementalDecoder stream(tok, skip);
    std::string streamed;
    for (const auto id : ids) streamed += stream.push(id);
    if (streamed + stream.flush() != decoded) std::abort();
  }
  return 0;
}
