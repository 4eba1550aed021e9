#pragma once
// Where and in which precision a model runs, as the command line and the GUI spell it.
// Torch-free so the CLI and protocol code can carry it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dfi::engine {

struct ModelOptions {
  // "cpu", "cuda" or "cuda:N". Several devices place the decoder layers across them in
  // contiguous, nearly equal runs (embeddings on the first, final norm and lm head on the last).
  std::vector<std::string> devices{"cpu"};
  std::string dtype = "fp32";  // fp32 | bf16 | fp16
  // The most bytes of weights a device may take (--max-memory cuda:0=70GiB), below its free
  // memory; a placement that does not fit is refused before loading (memory_plan.h).
  std::map<std::string, std::uint64_t> maxMemory;
};

}  // namespace dfi::engine
