#pragma once
// The gated delta rule of Gated DeltaNet (docs/qwen.md 3.3) in two equivalent forms: the chunked
// (WY / UT-transform) form, ATen operations on any device, for prefill on accelerators; and the
// token by token recurrence, a loop over raw memory on the CPU (one chunk of the chunked form
// elsewhere).
// Both take an initial state and return the final one; gatedDeltaRule() picks the faster.
//
// Shapes (Hk key heads, H value heads, Hk divides H; value head j reads key head j / (H / Hk)):
//   q, k: [B, T, Hk, dk]   v: [B, T, H, dv]   g (log decay, <= 0), beta: [B, T, H]
//   state: [B, H, dk, dv] (K rows x V cols, as fla and transformers store it), fp64 for fp32
//   inputs and fp32 for half-precision ones (see accumulationType in the .cpp)
// q and k are L2-normalised inside (use_qk_l2norm_in_kernel) and q is scaled by dk^-0.5.

#include <ATen/core/Tensor.h>

namespace dfi::engine {

struct DeltaRuleResult {
  at::Tensor output;      // [B, T, H, dv], in v's dtype
  at::Tensor finalState;  // [B, H, dk, dv] in the accumulation type
};

// `initialState` may be undefined (zeros).
DeltaRuleResult chunkedGatedDeltaRule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                      const at::Tensor& g, const at::Tensor& beta,
                                      const at::Tensor& initialState, int64_t chunkSize = 64);

DeltaRuleResult recurrentGatedDeltaRule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        const at::Tensor& g, const at::Tensor& beta,
                                        const at::Tensor& initialState);

// Which form gatedDeltaRule() takes: the faster one for the tensors' device (the default), or
// one forced on this thread while a ScopedDeltaRuleForm lives (`diagnose`'s gdn:<form>
// hypotheses: the numerics of the other form, as a training or serving stack would have them).
enum class DeltaRuleForm { Fastest, Chunked, Recurrent };

class ScopedDeltaRuleForm {
 public:
  explicit ScopedDeltaRuleForm(DeltaRuleForm form);
  ~ScopedDeltaRuleForm();
  ScopedDeltaRuleForm(const ScopedDeltaRuleForm&) = delete;
  ScopedDeltaRuleForm& operator=(const ScopedDeltaRuleForm&) = delete;

 private:
  DeltaRuleForm previous_;
};

// The recurrence on the CPU, the chunked form elsewhere, unless a ScopedDeltaRuleForm says. On the CPU the recurrence is faster at
// every length and shape bench_gated_delta_rule measures (1 to 1024 tokens, 1 and 2 threads,
// the demo's heads up to a Qwen3.5-9B-sized layer: 1.8-11x), since the chunked form's fp64 work
// is many small ops.
DeltaRuleResult gatedDeltaRule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                               const at::Tensor& beta, const at::Tensor& initialState);

}  // namespace dfi::engine
