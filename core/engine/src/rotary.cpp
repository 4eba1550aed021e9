#include "rotary.h"

#include <ATen/ATen.h>

namespace dfi::engine {

Rotary::Rotary(const tensorfile::RopeConfig& rope, int headDim, int maxPositionEmbeddings)
    : rotaryDim_(rope.rotaryDim(headDim)),
      attentionScaling_(tensorfile::ropeAttentionScaling(rope)) {
  const std::vector<double> inv = tensorfile::ropeInverseFrequencies(rope, headDim, maxPositionEmbeddings);
  invFreq_ = at::tensor(inv, at::kDouble).to(at::kFloat);
}

RotaryAngles Rotary::angles(int64_t start, int64_t count, at::ScalarType dtype, at::Device device) const {
  const at::Tensor positions = at::arange(start, start + count, at::TensorOptions().dtype(at::kFloat).device(device));
  const at::Tensor freqs = positions.unsqueeze(1) * invFreq_.to(device).unsqueeze(0);
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  return {(emb.cos() * attentionScaling_).to(dtype), (emb.sin() * attentionScaling_).to(dtype)};
}

at::Tensor Rotary::apply(const at::Tensor& x, const RotaryAngles& angles) {
  const int64_t rot = angles.cos.size(-1);
  const int64_t half = rot / 2;
  const at::Tensor xRot = x.narrow(-1, 0, rot);
  const at::Tensor rotatedHalf = at::cat({-xRot.narrow(-1, half, half), xRot.narrow(-1, 0, half)}, -1);
  const at::Tensor out = xRot * angles.cos + rotatedHalf * angles.sin;
  if (rot == x.size(-1)) return out;
  return at::cat({out, x.narrow(-1, rot, x.size(-1) - rot)}, -1);
}

}  // namespace dfi::engine
