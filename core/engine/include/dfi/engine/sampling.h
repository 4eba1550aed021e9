#pragma once
// How the live loop picks tokens: greedy (temperature 0, the default) or sampled with z-lab's
// dflash 0.1.0 rule (temperature, then top-k, then top-p, renormalised) and lossless rejection
// sampling of the drafted block. Torch-free: the run options, the settings and the summary
// name it; evaluation/speculative_sampling.h does the arithmetic.

#include <cstdint>
#include <string>

namespace dfi::engine {

struct SamplingOptions {
  double temperature = 0;  // 0: greedy (argmax), the package's default
  double topP = 1;         // nucleus: keep the most probable tokens whose mass before them is < top_p
  int topK = 0;            // keep the k most probable tokens; 0: the whole vocabulary
  std::uint64_t seed = 0;  // with the prompt id and the repeat, seeds every draw of a response

  bool greedy() const { return temperature <= 0; }
  bool operator==(const SamplingOptions&) const = default;
};

// The package's _validate_sampling: temperature >= 0, top_p in (0, 1], top_k >= 0; throws
// dfi::UsageError naming the option otherwise.
void validateSampling(const SamplingOptions& sampling);

// "greedy", or "T=1 top-p=0.95 top-k=20" (only the filters in use): the runs' label.
std::string samplingLabel(const SamplingOptions& sampling);

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
