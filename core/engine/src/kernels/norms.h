#pragma once
// The RMSNorm variants of the supported families (docs/qwen.md 1.1). They differ in where the
// cast back to the activation dtype happens and in how the weight is applied, which is what
// makes bf16 results match transformers bit for bit; do not merge them.

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/family_traits.h"

namespace dfi::engine {

// Qwen3RMSNorm: w * normalise(x).to(dtype); the weight multiply happens in the input dtype.
at::Tensor rmsNormQwen3(const at::Tensor& x, const at::Tensor& weight, double eps);

// Qwen3_5RMSNorm / Qwen3NextRMSNorm: (normalise(x) * (1 + w)).to(dtype), all in fp32; the
// stored weight is zero-centred.
at::Tensor rmsNormZeroCentred(const at::Tensor& x, const at::Tensor& weight, double eps);

// Qwen3_5RMSNormGated (GDN output norm): ((w * normalise(x).to(dtype)).float() * silu(z)).to(dtype).
at::Tensor rmsNormGated(const at::Tensor& x, const at::Tensor& gate, const at::Tensor& weight,
                        double eps);

// GptOssRMSNorm: (w * normalise(x)).to(dtype), all in fp32 (transformers keeps w in fp32);
// Gemma4RMSNorm computes the same with w in the compute dtype, upcast.
at::Tensor rmsNormFp32Weight(const at::Tensor& x, const at::Tensor& weight, double eps);

// Which variant a decoder stack uses for its layer and q/k norms: its family's trait.
using modelspec::NormKind;

at::Tensor rmsNorm(NormKind kind, const at::Tensor& x, const at::Tensor& weight, double eps);

}  // namespace dfi::engine
