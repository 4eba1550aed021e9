#include "kernels/rotary.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include "kernels/cpu_tasks.h"
#include "kernels/float_casts.h"
#include "kernels/kernel_path.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {

Rotary::Rotary(const modelspec::RopeConfig& rope, int headDim, int maxPositionEmbeddings)
    : rotaryDim_(rope.rotaryDim(headDim)),
      attentionScaling_(modelspec::ropeAttentionScaling(rope)) {
  const std::vector<double> inv = modelspec::ropeInverseFrequencies(rope, headDim, maxPositionEmbeddings);
  invFreq_ = at::tensor(inv, at::kDouble).to(at::kFloat);
}

RotaryAngles Rotary::angles(int64_t start, int64_t count, at::ScalarType dtype, at::Device device) const {
  const at::Tensor positions = at::arange(start, start + count, at::TensorOptions().dtype(at::kFloat).device(device));
  const at::Tensor freqs = positions.unsqueeze(1) * onDevice(invFreq_, device).unsqueeze(0);
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  return {asType(emb.cos() * attentionScaling_, dtype), asType(emb.sin() * attentionScaling_, dtype)};
}

namespace {

// x * cos + rotate_half(x) * sin with the roundings of the ATen form: each product rounded to
// the activation dtype, then their sum.
at::Tensor applyWithAten(const at::Tensor& x, const RotaryAngles& angles) {
  const int64_t rot = angles.cos.size(-1);
  const int64_t half = rot / 2;
  const at::Tensor xRot = x.narrow(-1, 0, rot);
  const at::Tensor rotatedHalf = at::cat({-xRot.narrow(-1, half, half), xRot.narrow(-1, 0, half)}, -1);
  const at::Tensor out = xRot * angles.cos + rotatedHalf * angles.sin;
  if (rot == x.size(-1)) return out;
  return at::cat({out, x.narrow(-1, rot, x.size(-1) - rot)}, -1);
}

// The same as one pass over the rows (the ATen form is 8-10 small ops per call, and a live
// step applies it ~10 times). Rows [begin, end) of x; row r is at position r % positions.
template <typename T>
void rotateRows(const T* x, const T* cos, const T* sin, T* out, int64_t begin, int64_t end, int64_t positions,
                int64_t dim, int64_t rot) {
  const int64_t half = rot / 2;
  // Each product rounded to T, then their sum, as the ATen form rounds.
  auto product = [](float a, T b) { return roundedTo<T>(a * toFloat(b)); };
  for (int64_t r = begin; r < end; ++r) {
    const T* xr = x + r * dim;
    const int64_t t = r % positions;
    const T* c = cos + t * rot;
    const T* s = sin + t * rot;
    T* o = out + r * dim;
    // rotate_half(x) is [-x2, x1]: two straight loops the compiler vectorises.
    for (int64_t i = 0; i < half; ++i)
      o[i] = fromFloat<T>(product(toFloat(xr[i]), c[i]) + product(-toFloat(xr[i + half]), s[i]));
    for (int64_t i = half; i < rot; ++i)
      o[i] = fromFloat<T>(product(toFloat(xr[i]), c[i]) + product(toFloat(xr[i - half]), s[i]));
    for (int64_t i = rot; i < dim; ++i) o[i] = xr[i];
  }
}

}  // namespace

at::Tensor Rotary::apply(const at::Tensor& x, const RotaryAngles& angles) {
  const int64_t positions = x.size(-2);
  const bool tablePerPosition = angles.cos.dim() == 2 && angles.cos.size(0) == positions;
  if (!takesCpuKernel(x) || !tablePerPosition || angles.cos.scalar_type() != x.scalar_type())
    return applyWithAten(x, angles);
  const at::Tensor input = x.contiguous(), cos = angles.cos.contiguous(), sin = angles.sin.contiguous();
  at::Tensor out = at::empty_like(input);
  const int64_t dim = x.size(-1), rows = dim == 0 ? 0 : input.numel() / dim;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "rotary", [&] {
    at::parallel_for(0, rows, rowsPerTask(dim), [&](int64_t begin, int64_t end) {
      rotateRows<scalar_t>(input.data_ptr<scalar_t>(), cos.data_ptr<scalar_t>(), sin.data_ptr<scalar_t>(),
                           out.data_ptr<scalar_t>(), begin, end, positions, dim, cos.size(-1));
    });
  });
  return out;
}

}  // namespace dfi::engine
