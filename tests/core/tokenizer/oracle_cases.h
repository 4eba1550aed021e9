#pragma once
// Reads the JSONL files written by tests/oracle/gen_tokenizer_cases.py (Hugging Face
// references). The directory comes from DFI_TOKENIZER_ORACLE, set by CMake.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dfi::tokenizer::testing {

inline std::filesystem::path oracleDir() {
  const char* dir = std::getenv("DFI_TOKENIZER_ORACLE");
  return dir ? std::filesystem::path(dir) : std::filesystem::path();
}

inline std::vector<nlohmann::json> readJsonl(const std::filesystem::path& path) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

}  // namespace dfi::tokenizer::testing
