#pragma once
// The gated delta rule of Gated DeltaNet (spec-qwen 3.3), in fp32, in two equivalent forms:
// the chunked (WY / UT-transform) form for prefill and verification blocks, and the token
// by token recurrence for single steps. Both take an initial state and return the final one.
//
// Shapes (heads already expanded so that q/k have one head per value head):
//   q, k: [B, T, H, dk]   v: [B, T, H, dv]   g (log decay, <= 0), beta: [B, T, H]
//   state: [B, H, dk, dv] fp32 (K rows x V cols, as fla and transformers store it)
// q and k are L2-normalised inside (use_qk_l2norm_in_kernel) and q is scaled by dk^-0.5.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

struct DeltaRuleResult {
  at::Tensor output;      // [B, T, H, dv], in v's dtype
  at::Tensor finalState;  // [B, H, dk, dv] fp32
};

// `initialState` may be undefined (zeros).
DeltaRuleResult chunkedGatedDeltaRule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                      const at::Tensor& g, const at::Tensor& beta,
                                      const at::Tensor& initialState, int64_t chunkSize = 64);

DeltaRuleResult recurrentGatedDeltaRule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        const at::Tensor& g, const at::Tensor& beta,
                                        const at::Tensor& initialState);

}  // namespace dfi::engine
