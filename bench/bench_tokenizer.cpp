// Tokenizer benchmark: load time of the real Qwen3 tokenizer.json and single-threaded encode
// throughput on a ~10 MB mixed corpus, each against Hugging Face `tokenizers` measured in the
// same run by bench_tokenizer_ref.py (which also writes the corpus, so both encode the same
// documents). Prints one JSON line per figure; speedup > 1 means dfi_tokenizer is faster.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_size.h"
#include "dfi/tokenizer/tokenizer.h"
#include "reference_script.h"

namespace {

using Clock = std::chrono::steady_clock;
using dfi::tokenizer::Tokenizer;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

nlohmann::json runReference(const std::filesystem::path& tokenizerJson, const std::filesystem::path& corpus, int repeat) {
  const std::string command = std::string("'") + DFI_PYTHON + "' '" + DFI_SOURCE_DIR + "/bench/bench_tokenizer_ref.py' --tokenizer '" +
                              tokenizerJson.string() + "' --corpus-out '" + corpus.string() +
                              "' --repeat " + std::to_string(repeat) + " --target-bytes " +
                              std::to_string(dfi::bench::sized(10'000'000, 30'000));
  return dfi::bench::referenceOutput(command);
}

void printFigure(const char* name, double dfiSeconds, double hfSeconds, const nlohmann::json& extra) {
  nlohmann::json line = {{"bench", name}, {"dfi_s", dfiSeconds}, {"hf_s", hfSeconds}, {"speedup_vs_hf", hfSeconds / dfiSeconds}};
  line.update(extra);
  std::cout << line.dump() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path tokenizerJson =
      argc > 1 ? argv[1] : std::filesystem::path(DFI_SOURCE_DIR) / "tests/data/tokenizers/qwen3/tokenizer.json";
  const int repeat = dfi::bench::sized(3, 1);
  const auto corpusPath = std::filesystem::temp_directory_path() / "dfi_bench_tokenizer_corpus.json";
  const nlohmann::json reference = runReference(tokenizerJson, corpusPath, repeat);

  std::ifstream in(corpusPath);
  const auto docs = nlohmann::json::parse(in).get<std::vector<std::string>>();
  std::filesystem::remove(corpusPath);

  // Same protocol as the reference: best of `repeat`, each encode pass on a fresh tokenizer
  // (so the piece cache starts cold every time).
  double loadSeconds = 1e9, encodeSeconds = 1e9;
  std::size_t tokens = 0, bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    const Tokenizer tok = Tokenizer::fromFile(tokenizerJson);
    loadSeconds = std::min(loadSeconds, secondsSince(start));
    tokens = bytes = 0;
    start = Clock::now();
    for (const auto& doc : docs) {
      tokens += tok.encode(doc).size();
      bytes += doc.size();
    }
    encodeSeconds = std::min(encodeSeconds, secondsSince(start));
  }

  // BPE and the split stay linear: one piece of letters (the split keeps it whole) four times as
  // long takes about four times as long, not sixteen.
  {
    const Tokenizer tok = Tokenizer::fromFile(tokenizerJson);
    auto pieceSeconds = [&](std::size_t n) {
      std::string text;
      for (std::size_t i = 0; i < n; ++i) text += "abcdefghijklmnopqrst"[(i * 7919 + i / 7) % 20];
      const auto start = Clock::now();
      (void)tok.encode(text);
      return secondsSince(start);
    };
    const std::size_t n = dfi::bench::sized<std::size_t>(100'000, 5'000);
    pieceSeconds(n / 5);  // warm up
    const double small = pieceSeconds(n), large = pieceSeconds(4 * n);
    std::cout << nlohmann::json{{"bench", "tokenizer_long_piece_qwen3"}, {"characters", n},
                                {"seconds_1x", small}, {"seconds_4x", large}, {"time_4x_over_1x", large / small},
                                {"linear", 4}}
                     .dump()
              << std::endl;
  }

  printFigure("tokenizer_load_qwen3", loadSeconds, reference["load_s"], nlohmann::json::object());
  const double mb = static_cast<double>(bytes) / 1e6;
  printFigure("tokenizer_encode_qwen3", encodeSeconds, reference["encode_s"],
              {{"bytes", bytes},
               {"dfi_mb_per_s", mb / encodeSeconds},
               {"hf_mb_per_s", mb / reference["encode_s"].get<double>()},
               {"tokens_equal", tokens == reference["tokens"].get<std::size_t>()}});
  return tokens == reference["tokens"].get<std::size_t>() ? 0 : 1;
}
