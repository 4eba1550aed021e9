#include "dfi/engine/sampling.h"

#include <cstdio>

#include "dfi/base/error.h"

namespace dfi::engine {
namespace {

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// splitmix64's finaliser: consecutive inputs give unrelated outputs.
std::uint64_t finalize(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t mix(std::uint64_t x) { return finalize(x + kGolden); }

std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

void validateSampling(const SamplingOptions& s) {
  if (!(s.temperature >= 0))
    throw UsageError("--temperature must be 0 (greedy) or more, got " + shortNumber(s.temperature));
  if (!(s.topP > 0 && s.topP <= 1)) throw UsageError("--top-p must be in (0, 1], got " + shortNumber(s.topP));
  if (s.topK < 0) throw UsageError("--top-k must be 0 (the whole vocabulary) or more, got " + std::to_string(s.topK));
}

std::string samplingLabel(const SamplingOptions& s) {
  if (s.greedy()) return "greedy";
  std::string label = "T=" + shortNumber(s.temperature);
  if (s.topP < 1) label += " top-p=" + shortNumber(s.topP);
  if (s.topK > 0) label += " top-k=" + std::to_string(s.topK);
  return label;
}

std::uint64_t responseSeed(std::uint64_t seed, int repeat, std::int64_t promptId) {
  return mix(mix(mix(seed) ^ static_cast<std::uint64_t>(repeat)) ^ static_cast<std::uint64_t>(promptId));
}

std::uint64_t SamplingStream::next() { return finalize(state_ += kGolden); }

float SamplingStream::acceptUniform() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

double SamplingStream::tokenUniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

}  // namespace dfi::engine
