#include "dfi/engine/sampling.h"

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

}  // namespace

std::uint64_t responseSeed(std::uint64_t seed, int repeat, std::int64_t promptId) {
  return mix(mix(mix(seed) ^ static_cast<std::uint64_t>(repeat)) ^ static_cast<std::uint64_t>(promptId));
}

std::uint64_t SamplingStream::next() { return finalize(state_ += kGolden); }

float SamplingStream::acceptUniform() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

double SamplingStream::tokenUniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

}  // namespace dfi::engine
