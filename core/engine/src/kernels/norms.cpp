#include "kernels/norms.h"

#include <cmath>

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include "kernels/cpu_tasks.h"
#include "kernels/float_casts.h"
#include "kernels/kernel_path.h"
#include "kernels/silu.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {
namespace {

enum class Variant { Qwen3, ZeroCentred, Fp32Weight, Gated };

// x * rsqrt(mean(x^2) + eps) over the last dimension, in fp32.
at::Tensor normaliseFp32(const at::Tensor& x, double eps) {
  const at::Tensor x32 = x.to(at::kFloat);
  return x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
}

// The ATen formulation, as transformers writes each variant; used off the CPU.
at::Tensor normWithAten(Variant variant, const at::Tensor& x, const at::Tensor& gate,
                        const at::Tensor& weight, double eps) {
  switch (variant) {
    case Variant::Qwen3:
      return weight * normaliseFp32(x, eps).to(x.scalar_type());
    case Variant::ZeroCentred:
      return (normaliseFp32(x, eps) * (weight.to(at::kFloat) + 1.0)).to(x.scalar_type());
    case Variant::Fp32Weight:
      return (weight.to(at::kFloat) * normaliseFp32(x, eps)).to(x.scalar_type());
    case Variant::Gated: {
      const at::Tensor normed = weight * normaliseFp32(x, eps).to(x.scalar_type());
      return (normed.to(at::kFloat) * at::silu(gate.to(at::kFloat))).to(x.scalar_type());
    }
  }
  return {};
}

// One row per call: the same roundings as the ATen formulation (normalise in fp32, round to T
// where transformers casts, multiply T by T in fp32 and round, as ATen's half-precision mul does).
template <typename T>
void normRow(Variant variant, const T* x, const T* gate, const float* weight, T* out, int64_t n,
             float eps) {
  // Eight running sums, so the compiler can keep them in one vector register (a single sum is a
  // chain of dependent adds).
  constexpr int64_t kLanes = 8;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += toFloat(x[i + l]) * toFloat(x[i + l]);
  float sumSquares = 0;
  for (; i < n; ++i) sumSquares += toFloat(x[i]) * toFloat(x[i]);
  for (const float lane : lanes) sumSquares += lane;
  const float inverse = 1.0f / std::sqrt(sumSquares / static_cast<float>(n) + eps);
  // One loop per variant, so that each is a straight loop the compiler vectorises.
  switch (variant) {
    case Variant::Qwen3:
      for (i = 0; i < n; ++i) out[i] = fromFloat<T>(weight[i] * roundedTo<T>(toFloat(x[i]) * inverse));
      break;
    case Variant::ZeroCentred:
      for (i = 0; i < n; ++i) out[i] = fromFloat<T>(toFloat(x[i]) * inverse * (weight[i] + 1.0f));
      break;
    case Variant::Fp32Weight:
      for (i = 0; i < n; ++i) out[i] = fromFloat<T>(weight[i] * (toFloat(x[i]) * inverse));
      break;
    case Variant::Gated:
      for (i = 0; i < n; ++i) {
        const float weighted = roundedTo<T>(weight[i] * roundedTo<T>(toFloat(x[i]) * inverse));
        out[i] = fromFloat<T>(weighted * silu(toFloat(gate[i])));
      }
      break;
  }
}

// The norm as one pass over the rows: the ATen formulation is 6-10 small ops per call, and a
// live step of a small model calls ~30 norms on a few rows each.
at::Tensor normOnCpu(Variant variant, const at::Tensor& input, const at::Tensor& gateInput,
                     const at::Tensor& weight, double eps) {
  const at::Tensor x = input.contiguous();
  const at::Tensor gate = variant == Variant::Gated ? gateInput.contiguous() : at::Tensor();
  const at::Tensor w = asType(weight, at::kFloat).contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t n = x.size(-1), rows = n == 0 ? 0 : x.numel() / n;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "rmsNorm", [&] {
    const scalar_t* xs = x.data_ptr<scalar_t>();
    const scalar_t* gs = gate.defined() ? gate.data_ptr<scalar_t>() : nullptr;
    scalar_t* os = out.data_ptr<scalar_t>();
    at::parallel_for(0, rows, rowsPerTask(n),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t r = begin; r < end; ++r)
                         normRow<scalar_t>(variant, xs + r * n, gs ? gs + r * n : nullptr,
                                           w.data_ptr<float>(), os + r * n, n,
                                           static_cast<float>(eps));
                     });
  });
  return out;
}

at::Tensor norm(Variant variant, const at::Tensor& x, const at::Tensor& gate,
                const at::Tensor& weight, double eps) {
  // The kernel reads the weight in fp32, which is the reference's own precision only where the
  // reference multiplies in fp32 (or the weight is stored in x's dtype).
  const bool weightTypeFits = weight.scalar_type() == x.scalar_type() ||
                              (variant == Variant::Fp32Weight && weight.scalar_type() == at::kFloat);
  const bool sameTypes = weightTypeFits && (!gate.defined() || gate.scalar_type() == x.scalar_type());
  return takesCpuKernel(x) && sameTypes ? normOnCpu(variant, x, gate, weight, eps)
                                 : normWithAten(variant, x, gate, weight, eps);
}

}  // namespace

at::Tensor rmsNormQwen3(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return norm(Variant::Qwen3, x, {}, weight, eps);
}

at::Tensor rmsNormZeroCentred(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return norm(Variant::ZeroCentred, x, {}, weight, eps);
}

at::Tensor rmsNormFp32Weight(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return norm(Variant::Fp32Weight, x, {}, weight, eps);
}

at::Tensor rmsNormGated(const at::Tensor& x, const at::Tensor& gate, const at::Tensor& weight,
                        double eps) {
  return norm(Variant::Gated, x, gate, weight, eps);
}

at::Tensor rmsNorm(NormKind kind, const at::Tensor& x, const at::Tensor& weight, double eps) {
  switch (kind) {
    case NormKind::Plain: return rmsNormQwen3(x, weight, eps);
    case NormKind::ZeroCentred: return rmsNormZeroCentred(x, weight, eps);
    case NormKind::Fp32Weight: return rmsNormFp32Weight(x, weight, eps);
    // Gemma4RMSNorm: the same fp32 product; its weight is held in the compute dtype (exact in fp32).
    case NormKind::Fp32Compute: return rmsNormFp32Weight(x, weight, eps);
  }
  return {};
}

}  // namespace dfi::engine
