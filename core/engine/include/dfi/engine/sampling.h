#pragma once
// How the live loop picks tokens: greedy (temperature 0, the default) or sampled with z-lab's
// dflash 0.1.0 rule (temperature, then top-k, then top-p, renormalised) and lossless rejection
// sampling of the drafted block. Torch-free: the run options, the settings and the summary
// name it; evaluation/live/speculative_sampling.h does the arithmetic.

#include <cstdint>
#include <string>

#include "dfi/settings/settings.h"

namespace dfi::engine {

// The options, their check and their label are the settings vocabulary's.
using settings::SamplingOptions;
using settings::samplingLabel;
using settings::validateSampling;

// The seed of one response: a mix of the run's seed, the repeat and the prompt id, so two
// drafters evaluated with one seed draw the same uniforms for the same (prompt, repeat): their
// comparison is paired (common random numbers).
std::uint64_t responseSeed(std::uint64_t seed, int repeat, std::int64_t promptId);

}  // namespace dfi::engine

namespace dfi::engine {

// The draws of one response, from a seed alone (no device or library state): uniforms for the
// acceptance tests (float32, as the package draws them with torch.rand_like on float32 q) and
// for token draws by inverse CDF (float64).
class SamplingStream {
 public:
  explicit SamplingStream(std::uint64_t seed) : state_(seed) {}
  float acceptUniform();   // in [0, 1), 24 random bits
  double tokenUniform();   // in [0, 1), 53 random bits

 private:
  std::uint64_t next();  // splitmix64
  std::uint64_t state_;
};

}  // namespace dfi::engine
