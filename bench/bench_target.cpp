// Target-model benchmark (CPU): prefill and greedy decode tokens/s of random ~100M-parameter
// checkpoints of each family bench_target_ref.py lists (Qwen3, Qwen3.5, MiniMax-M2, DeepSeek-V3,
// GLM-5) in fp32 and bf16, against Hugging Face transformers on the same
// checkpoints, ids and thread count, measured in the same run by bench_target_ref.py (which
// also writes the checkpoints, sharded at 100 MB). Also the host memory a load holds beyond
// the weights it keeps, against the largest shard (the loader streams tensor by tensor from
// the memory map, so that transient stays far below a shard).
// Prints one JSON line per figure; speedup > 1 means the engine is faster.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "bench_size.h"
#include "models/model_cache.h"
#include "models/target_model.h"
#include "reference_script.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using dfi::engine::ModelCache;
using dfi::engine::ModelOptions;
using dfi::engine::TargetModel;

// Best of 8 on both sides: the engine's 8 passes against the reference's 4 before and 4 after (a
// prefill is a fraction of a second, and the shared host's noise is +-10-25%). A smoke run
// times one short pass of each on the reference's tiny models (--tiny: ~400 times fewer weights).
const int64_t kVocab = dfi::bench::sized(32000, 1024), kPrefill = dfi::bench::sized(256, 16),
              kDecode = dfi::bench::sized(32, 4), kRepeat = dfi::bench::sized(8, 1),
              kReferenceRepeat = dfi::bench::sized(4, 1);

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

nlohmann::json runReference(const fs::path& dataDir, int threads) {
  const std::string command = std::string("'") + DFI_PYTHON + "' '" + DFI_SOURCE_DIR + "/bench/bench_target_ref.py' --data-dir '" +
                              dataDir.string() + "' --threads " + std::to_string(threads) + " --prefill " +
                              std::to_string(kPrefill) + " --decode " + std::to_string(kDecode) + " --repeat " +
                              std::to_string(kReferenceRepeat) + " --vocab " + std::to_string(kVocab) +
                              (dfi::bench::smoke() ? " --tiny" : "");
  return dfi::bench::referenceOutput(command);
}

// The same ids as bench_target_ref.py.
at::Tensor benchIds(int64_t n) {
  return (at::arange(n, at::kLong) * 7919 + 13).remainder(kVocab).unsqueeze(0);
}

struct Timing {
  double prefill = 1e9, decode = 1e9;
};

Timing measure(const TargetModel& model) {
  at::InferenceMode guard;
  const at::Tensor ids = benchIds(kPrefill);
  Timing best;
  for (int r = 0; r < kRepeat; ++r) {
    ModelCache cache = model.newCache();
    auto start = Clock::now();
    at::Tensor logits = model.forward(ids, &cache).logits;
    best.prefill = std::min(best.prefill, secondsSince(start));
    at::Tensor token = logits.select(1, -1).argmax(-1, /*keepdim=*/true);
    start = Clock::now();
    for (int64_t step = 0; step < kDecode; ++step) {
      logits = model.forward(token, &cache).logits;
      token = logits.select(1, -1).argmax(-1, true);
    }
    best.decode = std::min(best.decode, secondsSince(start));
  }
  return best;
}

int64_t rssAnonBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  int64_t kb = 0;
  while (status >> key) {
    if (key == "RssAnon:") {
      status >> kb;
      return kb * 1024;
    }
    status.ignore(1 << 10, '\n');
  }
  return 0;
}

// Peak anonymous (non file-backed) memory a load adds beyond what the loaded model keeps,
// sampled every 200 us: mapped checkpoint pages are file cache, not host memory a load holds.
int64_t loadTransientBytes(const fs::path& dir, const std::string& dtype) {
  const int64_t before = rssAnonBytes();
  std::atomic<bool> loading{true};
  std::atomic<int64_t> peak{before};
  std::thread sampler([&] {
    while (loading) {
      peak = std::max<int64_t>(peak, rssAnonBytes());
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  auto model = TargetModel::load(dir, ModelOptions{.devices = {"cpu"}, .dtype = dtype});
  loading = false;
  sampler.join();
  const int64_t kept = rssAnonBytes();
  return std::max<int64_t>(0, peak - kept);
}

int64_t largestShardBytes(const fs::path& dir) {
  int64_t largest = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".safetensors") largest = std::max<int64_t>(largest, entry.file_size());
  return largest;
}

void printSpeed(const std::string& name, double ours, double theirs, int64_t tokens, int threads) {
  const nlohmann::json line = {{"bench", name},           {"dfi_tokens_per_s", tokens / ours},
                               {"hf_tokens_per_s", tokens / theirs}, {"speedup_vs_hf", theirs / ours},
                               {"threads", threads}};
  std::cout << line.dump() << std::endl;
}

}  // namespace

int main() {
  // One thread in a smoke run: on a loaded machine, threads waiting for a core spin in OpenMP
  // barriers (4 decode steps took Python 5 s with 2 threads on a busy 2-core machine).
  const int threads = dfi::bench::sized(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), 1);
  at::set_num_threads(threads);
  const fs::path dataDir =
      dfi::bench::sized(fs::path(DFI_BENCH_DATA_DIR), fs::path(DFI_BENCH_DATA_DIR) / "target_smoke");
  fs::create_directories(dataDir);
  // The reference runs before and after the engine and each side keeps its best time, so a
  // machine whose load changes during the run does not favour either side (a smoke run starts
  // Python once: its start is most of the run).
  const nlohmann::json before = runReference(dataDir, threads);
  std::vector<std::string> archs;  // the reference's list, so that the families are named once
  for (const auto& [arch, timings] : before.items()) archs.push_back(arch);
  std::map<std::string, Timing> ours;
  for (const std::string& arch : archs)
    for (const std::string dtype : {"fp32", "bf16"}) {
      const auto model = TargetModel::load(dataDir / ("bench_" + arch), ModelOptions{.devices = {"cpu"}, .dtype = dtype});
      ours[arch + "_" + dtype] = measure(*model);
    }
  const nlohmann::json after = dfi::bench::smoke() ? before : runReference(dataDir, threads);
  for (const std::string& arch : archs) {
    const fs::path dir = dataDir / ("bench_" + arch);
    for (const std::string dtype : {"fp32", "bf16"}) {
      const Timing& mine = ours[arch + "_" + dtype];
      auto best = [&](const char* key) {
        return std::min(before[arch][dtype][key].get<double>(), after[arch][dtype][key].get<double>());
      };
      printSpeed("target_prefill_" + arch + "_" + dtype, mine.prefill, best("prefill_s"), kPrefill, threads);
      printSpeed("target_decode_" + arch + "_" + dtype, mine.decode, best("decode_s"), kDecode, threads);
    }
    for (const std::string dtype : {"fp32", "bf16"}) {
      const int64_t transient = loadTransientBytes(dir, dtype);
      const int64_t shard = largestShardBytes(dir);
      const nlohmann::json line = {{"bench", "target_load_host_memory_" + arch + "_" + dtype},
                                   {"transient_bytes", transient},
                                   {"largest_shard_bytes", shard},
                                   {"transient_over_largest_shard", static_cast<double>(transient) / shard}};
      std::cout << line.dump() << std::endl;
    }
  }
}
