#pragma once
// The benches' references run in Python (transformers, tokenizers, a PyTorch loop) in the same
// run; each prints one JSON document on stdout, read here.

#include <cstdio>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace dfi::bench {

// Runs `command` through the shell and parses its standard output as JSON; a command that
// cannot start or exits non-zero is an error naming it.
inline nlohmann::json referenceOutput(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string output;
  char buffer[4096];
  while (const std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  if (pclose(pipe) != 0) throw std::runtime_error("reference script failed: " + command);
  return nlohmann::json::parse(output);
}

}  // namespace dfi::bench
