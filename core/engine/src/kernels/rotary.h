#pragma once
// Rotary position embedding in the rotate-half (NeoX) convention, with partial rotation
// (Qwen3.5/Next rotate only the first rotaryDim channels of a head) and the default or YaRN
// frequency schedules (docs/qwen.md 1.2).

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/rope_config.h"

namespace dfi::engine {

// cos and sin for a run of positions, already in the activation dtype: [T, rotaryDim].
struct RotaryAngles {
  at::Tensor cos;
  at::Tensor sin;
};

class Rotary {
 public:
  Rotary(const modelspec::RopeConfig& rope, int headDim, int maxPositionEmbeddings);

  int rotaryDim() const { return rotaryDim_; }

  // Angles for positions start .. start+count-1, computed in fp32 (as transformers does) and
  // then cast to `dtype` on `device`.
  RotaryAngles angles(int64_t start, int64_t count, at::ScalarType dtype, at::Device device) const;

  // x: [B, heads, T, headDim]; rotates the first rotaryDim channels, passes the rest through.
  static at::Tensor apply(const at::Tensor& x, const RotaryAngles& angles);

 private:
  int rotaryDim_;
  at::Tensor invFreq_;  // [rotaryDim/2] fp32, CPU
  double attentionScaling_;
};

}  // namespace dfi::engine
