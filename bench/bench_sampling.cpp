// The live loop sampled at temperature 1 (and greedy, for comparison) against z-lab's own
// dflash_generate (dflash 0.1.0) on dense models bench_sampling_ref.py builds and times in the
// same run: the live-loop oracle's tiny models (width 32, vocabulary 16: the loop's overhead is
// the cost) and small ones (width 256, vocabulary 2048: the models' arithmetic is a good part
// of it); the same target and package drafter, prompts and token budget, one thread each. The
// two sides sample with different generators, so the figure is tokens per second, and both
// sides' mean acceptance lengths are printed to show they ran the same process
// (tests/oracle/check_sampling_distribution.py tests the distributions). speedup > 1: the
// engine is faster.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "bench_size.h"
#include "evaluation/live/dflash_decode.h"
#include "evaluation/evaluation_models.h"
#include "models/target_model.h"
#include "reference_script.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using namespace dfi::engine;

const int kMaxNewTokens = dfi::bench::sized(64, 16), kRepeat = dfi::bench::sized(3, 1);

// One figure: both loops at `temperature` over the same prompts on `models` (tiny or small,
// built by the reference script), best of kRepeat passes each.
nlohmann::json measure(const std::string& models, double temperature, int threads, const fs::path& dir) {
  const nlohmann::json reference = dfi::bench::referenceOutput(
      std::string("'") + DFI_PYTHON + "' '" + DFI_SOURCE_DIR + "/bench/bench_sampling_ref.py' '" + dir.string() +
      "' --models " + models + " --threads " + std::to_string(threads) + " --max-new-tokens " + std::to_string(kMaxNewTokens) +
      " --repeat " + std::to_string(kRepeat) + " --temperature " + std::to_string(temperature) + " 2>/dev/null");
  const auto target = TargetModel::load(dir / "target", ModelOptions{.devices = {"cpu"}, .dtype = "fp32"});
  const auto drafter = loadDrafter(dir / "drafter", *target);
  std::ifstream promptsFile(dir / "prompts.json");
  const auto prompts = nlohmann::json::parse(promptsFile).get<std::vector<std::vector<std::int64_t>>>();

  double best = 1e9;
  std::int64_t tokens = 0, steps = 0, accepted = 0;
  for (int r = 0; r < kRepeat; ++r) {
    std::int64_t passTokens = 0, passSteps = 0, passAccepted = 0;
    const auto start = Clock::now();
    for (std::size_t p = 0; p < prompts.size(); ++p) {
      const SpeculativeResult result = speculativeDecode(
          *target, *drafter, prompts[p],
          {.maxNewTokens = kMaxNewTokens,
           .sampling = {.temperature = temperature, .seed = responseSeed(7, r, static_cast<std::int64_t>(p))}});
      passTokens += static_cast<std::int64_t>(result.tokens.size() - prompts[p].size());
      for (const auto& step : result.steps) passAccepted += step.acceptLength();
      passSteps += static_cast<std::int64_t>(result.steps.size());
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds < best) best = seconds, tokens = passTokens, steps = passSteps, accepted = passAccepted;
  }
  const double engineRate = static_cast<double>(tokens) / best;
  const double referenceRate = reference["tokens"].get<double>() / reference["seconds"].get<double>();
  return {{"bench", "sampling_live_tokens_per_s"},
          {"models", models},
          {"temperature", temperature},
          {"engine", engineRate},
          {"reference", referenceRate},
          {"speedup", engineRate / referenceRate},
          {"engine_mean_acceptance_length", static_cast<double>(accepted) / static_cast<double>(steps)},
          {"reference_mean_acceptance_length", reference["mean_acceptance_length"]},
          {"threads", threads},
          {"reference_impl", "dflash 0.1.0 dflash_generate, transformers Qwen3 target"}};
}

}  // namespace

// DFI_BENCH_THREADS=T (default 1, as bench_dflash).
int main() {
  const char* threadsEnv = std::getenv("DFI_BENCH_THREADS");
  const int threads = threadsEnv ? std::max(1, std::atoi(threadsEnv)) : 1;
  at::set_num_threads(threads);
  const fs::path dir = fs::temp_directory_path() / "dfi_bench_sampling";
  // Greedy too, on the same models: what sampling costs each side. A smoke run samples on the
  // tiny models only (each figure starts Python, most of a smoke run's time).
  for (const char* models : dfi::bench::sized<std::vector<const char*>>({"tiny", "small"}, {"tiny"}))
    for (double temperature : dfi::bench::sized<std::vector<double>>({1.0, 0.0}, {1.0}))
      std::cout << measure(models, temperature, threads, dir).dump() << "\n";
}
