#include "dfi/modelspec/rope_config.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace dfi::modelspec {

int RopeConfig::rotaryDim(int headDim) const {
  if (type == "proportional") return headDim;
  return static_cast<int>(headDim * partialRotaryFactor);
}

namespace {

// YaRN: the (fractional) channel index at which a wavelength completes `rotations` turns
// over the original context.
double correctionDim(double rotations, int dim, double base, double originalMax) {
  return dim * std::log(originalMax / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
}

double yarnMscale(double factor, double mscale) {
  return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

double originalContext(const RopeConfig& rope, int maxPositionEmbeddings) {
  return rope.originalMaxPositionEmbeddings > 0 ? rope.originalMaxPositionEmbeddings : maxPositionEmbeddings;
}

// transformers' _compute_llama3_parameters: long wavelengths (beyond original / low_freq_factor)
// are interpolated by factor, short ones (below original / high_freq_factor) kept, and the band
// between blends the two with a factor linear in original / wavelength.
std::vector<double> llama3Frequencies(const RopeConfig& rope, std::vector<double> invFreq, int maxPositionEmbeddings) {
  const double original = originalContext(rope, maxPositionEmbeddings);
  const double lowFreqWavelen = original / rope.lowFreqFactor;
  const double highFreqWavelen = original / rope.highFreqFactor;
  for (double& f : invFreq) {
    const double wavelen = 2 * std::numbers::pi / f;
    if (wavelen > lowFreqWavelen) {
      f /= rope.factor;
    } else if (wavelen >= highFreqWavelen) {
      const double smooth = (original / wavelen - rope.lowFreqFactor) / (rope.highFreqFactor - rope.lowFreqFactor);
      f = (1 - smooth) * f / rope.factor + smooth * f;
    }
  }
  return invFreq;
}

// transformers' _compute_proportional_rope_parameters: the first int(partial * head_dim // 2)
// frequencies are theta^(-2i / head_dim) (over the whole head_dim, not the rotated part), the
// rest of the half zero; all divided by factor.
std::vector<double> proportionalFrequencies(const RopeConfig& rope, int headDim) {
  const int rotated = static_cast<int>(std::floor(rope.partialRotaryFactor * headDim / 2));
  std::vector<double> invFreq(static_cast<std::size_t>(headDim / 2), 0.0);
  for (int i = 0; i < rotated && i < headDim / 2; ++i)
    invFreq[i] = 1.0 / std::pow(rope.theta, double(2 * i) / headDim) / rope.factor;
  return invFreq;
}

}  // namespace

std::vector<double> ropeInverseFrequencies(const RopeConfig& rope, int headDim,
                                           int maxPositionEmbeddings) {
  if (rope.type == "proportional") return proportionalFrequencies(rope, headDim);
  const int dim = rope.rotaryDim(headDim);
  if (dim <= 0) return {};
  std::vector<double> invFreq;
  for (int i = 0; i < dim; i += 2) invFreq.push_back(1.0 / std::pow(rope.theta, double(i) / dim));
  if (rope.type == "llama3") return llama3Frequencies(rope, std::move(invFreq), maxPositionEmbeddings);
  if (rope.type != "yarn") return invFreq;

  // Blend interpolated (divided by factor) and extrapolated frequencies with a linear ramp
  // between the channels that turn beta_fast and beta_slow times over the original context.
  const double originalMax = originalContext(rope, maxPositionEmbeddings);
  double low = correctionDim(rope.betaFast, dim, rope.theta, originalMax);
  double high = correctionDim(rope.betaSlow, dim, rope.theta, originalMax);
  if (rope.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(dim - 1));
  if (low == high) high += 0.001;  // the reference avoids a zero-width ramp this way
  for (int j = 0; j < static_cast<int>(invFreq.size()); ++j) {
    double ramp = std::clamp((j - low) / (high - low), 0.0, 1.0);
    double extrapolationWeight = 1 - ramp;
    double extrapolated = invFreq[j];
    double interpolated = invFreq[j] / rope.factor;
    invFreq[j] = interpolated * (1 - extrapolationWeight) + extrapolated * extrapolationWeight;
  }
  return invFreq;
}

double ropeAttentionScaling(const RopeConfig& rope) {
  if (rope.type != "yarn") return 1.0;
  if (rope.attentionFactor) return *rope.attentionFactor;
  if (rope.mscale && rope.mscaleAllDim && *rope.mscale != 0 && *rope.mscaleAllDim != 0)
    return yarnMscale(rope.factor, *rope.mscale) / yarnMscale(rope.factor, *rope.mscaleAllDim);
  return yarnMscale(rope.factor, 1.0);
}

}  // namespace dfi::modelspec
