// libFuzzer target for the files a user hands the engine: a prompts JSONL (`run --prompts`)
// and the four import formats (`import --format zlab|vllm|sglang|jsonl`). The first byte picks
// the reader, the rest is the file. Whatever the bytes, a reader either returns records or
// throws a dfi::Error naming the file: never crash, hang or read out of bounds. Imported
// responses are also turned into steps, as `import` does, at their recorded block size.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "dfi/base/error.h"
#include "dfi/engine/prompt_set.h"
#include "dfi/imports/imported_records.h"

namespace {

const std::filesystem::path& scratchFile() {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("dfi_fuzz_user_file_" + std::to_string(::getpid()) + ".jsonl");
  return path;
}

void readAsImport(dfi::imports::Format format) {
  const auto records = dfi::imports::readImportedRecords(format, scratchFile());
  const int blockSize = records.blockSize.value_or(16);
  if (blockSize < 2 || blockSize > 4096) return;  // importedSteps' callers refuse these first
  for (const auto& response : records.responses)
    (void)dfi::imports::importedSteps(response, static_cast<std::int64_t>(response.promptTokens.size()), blockSize,
                                      records.file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  {
    std::ofstream out(scratchFile(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    switch (data[0] % 5) {
      case 0:
        (void)dfi::engine::readPromptSet(scratchFile(), {.skipMalformed = (data[0] & 0x80) != 0});
        break;
      case 1: readAsImport(dfi::imports::Format::Zlab); break;
      case 2: readAsImport(dfi::imports::Format::Vllm); break;
      case 3: readAsImport(dfi::imports::Format::Sglang); break;
      default: readAsImport(dfi::imports::Format::Jsonl); break;
    }
  } catch (const dfi::Error&) {
    // malformed lines, unknown fields, inconsistent values: all expected, each named
  }
  return 0;
}
