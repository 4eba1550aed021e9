#include "norms.h"

#include <ATen/ATen.h>

namespace dfi::engine {
namespace {

// x * rsqrt(mean(x^2) + eps) over the last dimension, in fp32.
at::Tensor normaliseFp32(const at::Tensor& x, double eps) {
  const at::Tensor x32 = x.to(at::kFloat);
  return x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
}

}  // namespace

at::Tensor rmsNormQwen3(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return weight * normaliseFp32(x, eps).to(x.scalar_type());
}

at::Tensor rmsNormZeroCentred(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return (normaliseFp32(x, eps) * (weight.to(at::kFloat) + 1.0)).to(x.scalar_type());
}

at::Tensor rmsNormGated(const at::Tensor& x, const at::Tensor& gate, const at::Tensor& weight,
                        double eps) {
  const at::Tensor normed = weight * normaliseFp32(x, eps).to(x.scalar_type());
  return (normed.to(at::kFloat) * at::silu(gate.to(at::kFloat))).to(x.scalar_type());
}

at::Tensor rmsNorm(NormKind kind, const at::Tensor& x, const at::Tensor& weight, double eps) {
  return kind == NormKind::Qwen3 ? rmsNormQwen3(x, weight, eps) : rmsNormZeroCentred(x, weight, eps);
}

}  // namespace dfi::engine
