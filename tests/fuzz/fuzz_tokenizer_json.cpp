// libFuzzer target for the tokenizer files a user's model directory holds: arbitrary bytes as
// tokenizer.json (the first byte 0) or as a tiktoken rank file beside a tokenizer_config.json
// (the first byte 1). Whatever the bytes, loading either returns a tokenizer that encodes and
// decodes a short text, or throws a dfi::Error naming the file: never crash, hang or exhaust
// memory.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "dfi/base/error.h"
#include "dfi/tokenizer/tokenizer.h"

namespace {

const std::filesystem::path& scratchDir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("dfi_fuzz_tokenizer_json_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::ofstream(d / "tokenizer_config.json")
        << R"({"added_tokens_decoder": {"3": {"content": "<|end|>", "special": true}}})";
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool rankFile = data[0] % 2 == 1;
  const auto file = scratchDir() / (rankFile ? "tiktoken.model" : "tokenizer.json");
  std::filesystem::remove(scratchDir() / (rankFile ? "tokenizer.json" : "tiktoken.model"));
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    const auto tok = dfi::tokenizer::Tokenizer::fromDirectory(scratchDir());
    const auto ids = tok.encode("def f(x):\n    return x  # ok <|end|>");
    (void)tok.decode(ids);
  } catch (const dfi::Error&) {
    // malformed JSON, unknown model types, bad ranks, duplicate tokens: all expected, each named
  }
  return 0;
}
