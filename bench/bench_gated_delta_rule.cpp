// The two forms of the gated delta rule on the CPU (fp32 inputs, fp64 accumulation as the
// engine runs fp32 models): the recurrence over raw memory against the chunked ATen form, at the
// lengths a live loop uses (1 decode step, 16-token verification, short rewinds) and prefill
// lengths, for the demo target's shape and a Qwen3.5-sized layer. gatedDeltaRule() runs the
// recurrence on the CPU at every length because of what this benchmark measures. Prints one
// JSON line per shape and length; speedup > 1 means the recurrence is faster.

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <nlohmann/json.hpp>

#include "bench_size.h"
#include "kernels/gated_delta_rule.h"

namespace {

using Clock = std::chrono::steady_clock;
using dfi::engine::DeltaRuleResult;

struct Shape {
  std::string name;
  int64_t keyHeads, heads, dk, dv;
};

// Best per-call seconds of `calls` calls, best of 5 rounds.
template <typename F>
double bestSeconds(F&& call, int calls) {
  double best = 1e9;
  for (int round = 0; round < 5; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / calls);
  }
  return best;
}

}  // namespace

int main() {
  c10::InferenceMode inference;
  // A smoke run keeps to one thread: on a loaded machine, threads waiting for a core spin in
  // OpenMP barriers for a minute.
  const int cores = dfi::bench::sized(at::get_num_threads(), 1);
  for (const int threads : {1, cores}) {
    at::set_num_threads(threads);
    for (const Shape& shape :
         {Shape{"demo", 2, 4, 32, 32}, Shape{"bench_target-qwen35", 8, 16, 64, 64},
          Shape{"qwen3.5-9b-layer", 16, 32, 128, 128}}) {
      // A smoke run: a decode step and a verification, with a sixteenth of the calls.
      for (const int64_t steps : dfi::bench::sized<std::vector<int64_t>>({1, 4, 16, 64, 256, 1024}, {1, 16})) {
        at::manual_seed(0);
        const at::Tensor q = at::randn({1, steps, shape.keyHeads, shape.dk}),
                         k = at::randn({1, steps, shape.keyHeads, shape.dk});
        const at::Tensor v = at::randn({1, steps, shape.heads, shape.dv});
        const at::Tensor g = -at::rand({1, steps, shape.heads}),
                         beta = at::rand({1, steps, shape.heads});
        const at::Tensor state = at::randn({1, shape.heads, shape.dk, shape.dv}, at::kDouble);
        const int calls = std::max<int>(2, static_cast<int>(dfi::bench::sized(4096, 256) / (steps * shape.heads)));
        const double recurrent = bestSeconds(
            [&] { dfi::engine::recurrentGatedDeltaRule(q, k, v, g, beta, state); }, calls);
        const double chunked = bestSeconds(
            [&] { dfi::engine::chunkedGatedDeltaRule(q, k, v, g, beta, state); }, calls);
        std::cout << nlohmann::json{{"bench", "gated_delta_rule_cpu"},
                                    {"shape", shape.name},
                                    {"steps", steps},
                                    {"recurrent_us", recurrent * 1e6},
                                    {"chunked_us", chunked * 1e6},
                                    {"speedup_recurrent", chunked / recurrent},
                                    {"threads", threads}}
                         .dump()
                  << std::endl;
      }
    }
    if (cores == 1) break;
  }
  return 0;
}
