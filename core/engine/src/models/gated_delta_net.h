#pragma once
// The Gated DeltaNet token mixer of Qwen3.5 / Qwen3.6 / Qwen3-Next linear-attention layers
// (docs/qwen.md 3.3-3.5): projections, depthwise causal conv + SiLU, the gated delta rule with an
// fp32 state, the gated output RMSNorm and out_proj. Qwen3-Next's fused in_proj_qkvz /
// in_proj_ba are regrouped at load time into Qwen3.5's order; all input projections are stacked
// into one weight (one GEMM).

#include <string>

#include <ATen/core/Tensor.h>

namespace dfi::engine {

class WeightLoader;

struct GatedDeltaNetDims {
  int hiddenSize = 0;
  int numKeyHeads = 0;    // Hk
  int numValueHeads = 0;  // Hv, a multiple of Hk
  int keyHeadDim = 0;     // dk
  int valueHeadDim = 0;   // dv
  int convKernel = 0;     // K
  double eps = 1e-6;

  int64_t keyDim() const { return int64_t{numKeyHeads} * keyHeadDim; }
  int64_t valueDim() const { return int64_t{numValueHeads} * valueHeadDim; }
  int64_t convDim() const { return 2 * keyDim() + valueDim(); }
};

// Decoding state of one linear-attention layer, plus what its last cached forward needs to be
// rewound to any shorter prefix of that forward (speculative verification rejects a suffix).
struct LinearAttentionState {
  at::Tensor conv;       // [B, convDim, K-1]: the last K-1 pre-conv inputs (only they reach the next output)
  at::Tensor recurrent;  // [B, Hv, dk, dv] in the rule's accumulation type (fp64 for fp32 models)

  // Recorded by the last cached forward (released by commit()):
  at::Tensor convInput;   // [B, convDim, K-1+T]: the previous window followed by the T new inputs
  at::Tensor startState;  // recurrent state before the forward
  at::Tensor q, k, v, g, beta;  // delta-rule inputs of the T tokens (q and k per key head)

  bool empty() const { return !recurrent.defined(); }
  int64_t recordedTokens() const { return v.defined() ? v.size(1) : 0; }
  // Keeps only the first `tokens` of the last forward.
  void rewind(int64_t tokens);
  void commit();
};

class GatedDeltaNet {
 public:
  GatedDeltaNet(const WeightLoader& weights, const std::string& prefix, const GatedDeltaNetDims& dims,
                at::Device device);

  // x: [B, T, H] (already input-normed). With a state: continues from it (the delta rule from
  // the cached state, conv over the cached window) and updates it. `rewindable`
  // records what LinearAttentionState::rewind needs (verification blocks, not long prefills).
  at::Tensor forward(const at::Tensor& x, LinearAttentionState* state, bool rewindable = false) const;

 private:
  GatedDeltaNetDims dims_;
  // in_proj_qkv, in_proj_z, in_proj_b and in_proj_a stacked in that order: one GEMM.
  at::Tensor inProj_;
  at::Tensor conv_;  // [convDim, 1, K]
  at::Tensor dtBias_, aLog_, norm_, outProj_;
};

}  // namespace dfi::engine
