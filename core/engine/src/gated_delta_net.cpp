#include "gated_delta_net.h"

#include <ATen/ATen.h>

#include "gated_delta_rule.h"
#include "norms.h"
#include "weight_loader.h"

namespace dfi::engine {
namespace {

// Depthwise causal conv over `input` [B, C, window + T] with `weight` [C, 1, K]: the K taps as
// K shifted multiply-adds in fp32, rounded once. at::conv1d computes the same, but its CPU
// depthwise kernel for bf16 is ~25x slower than fp32 (40 ms per 2048-channel decode step on
// 2 cores), which made bf16 decode slower than fp32.
at::Tensor causalDepthwiseConv(const at::Tensor& input, const at::Tensor& weight) {
  const int64_t taps = weight.size(-1), steps = input.size(2) - taps + 1;
  const at::Tensor w = weight.squeeze(1).to(at::kFloat);  // [C, K]
  at::Tensor out = input.narrow(2, 0, steps).to(at::kFloat) * w.select(1, 0).unsqueeze(-1);
  for (int64_t j = 1; j < taps; ++j)
    out.addcmul_(input.narrow(2, j, steps).to(at::kFloat), w.select(1, j).unsqueeze(-1));
  return out.to(input.scalar_type());
}

}  // namespace

void LinearAttentionState::rewind(int64_t tokens) {
  const int64_t recorded = recordedTokens();
  if (tokens >= recorded) return;
  const int64_t window = conv.size(2);
  // Recompute the state over the kept tokens from the state before the forward (see
  // ModelCache for why this beats storing a state per token).
  recurrent = tokens == 0 ? startState
                          : recurrentGatedDeltaRule(q.narrow(1, 0, tokens), k.narrow(1, 0, tokens),
                                                    v.narrow(1, 0, tokens), g.narrow(1, 0, tokens),
                                                    beta.narrow(1, 0, tokens), startState)
                                .finalState;
  conv = convInput.narrow(2, tokens, window).contiguous();
  convInput = convInput.narrow(2, 0, window + tokens);
  for (at::Tensor* t : {&q, &k, &v, &g, &beta}) *t = t->narrow(1, 0, tokens);
}

void LinearAttentionState::commit() {
  for (at::Tensor* t : {&convInput, &startState, &q, &k, &v, &g, &beta}) *t = at::Tensor();
}

GatedDeltaNet::GatedDeltaNet(const WeightLoader& weights, const std::string& prefix,
                             const GatedDeltaNetDims& dims, at::Device device)
    : dims_(dims) {
  const int64_t h = dims.hiddenSize, hv = dims.numValueHeads;
  if (weights.contains(prefix + "in_proj_qkvz.weight")) {
    loadFused(weights, prefix, device);
  } else {
    inProjQkv_ = weights.load(prefix + "in_proj_qkv.weight", {dims.convDim(), h}, device);
    inProjZ_ = weights.load(prefix + "in_proj_z.weight", {dims.valueDim(), h}, device);
    inProjB_ = weights.load(prefix + "in_proj_b.weight", {hv, h}, device);
    inProjA_ = weights.load(prefix + "in_proj_a.weight", {hv, h}, device);
  }
  conv_ = weights.load(prefix + "conv1d.weight", {dims.convDim(), 1, dims.convKernel}, device);
  dtBias_ = weights.load(prefix + "dt_bias", {hv}, device);
  aLog_ = weights.load(prefix + "A_log", {hv}, device);
  norm_ = weights.load(prefix + "norm.weight", {dims.valueHeadDim}, device);
  outProj_ = weights.load(prefix + "out_proj.weight", {h, dims.valueDim()}, device);
}

// Qwen3-Next groups the fused rows by key head: per head g, [q_g | k_g | v_g (r*dv) | z_g (r*dv)]
// and [b_g (r) | a_g (r)]. Regrouping them once gives Qwen3.5's layout, so one forward serves both.
void GatedDeltaNet::loadFused(const WeightLoader& weights, const std::string& prefix, at::Device device) {
  const int64_t h = dims_.hiddenSize, hk = dims_.numKeyHeads, dk = dims_.keyHeadDim;
  const int64_t r = dims_.numValueHeads / dims_.numKeyHeads, groupV = r * dims_.valueHeadDim;
  const at::Tensor qkvz = weights.load(prefix + "in_proj_qkvz.weight",
                                       {2 * dims_.keyDim() + 2 * dims_.valueDim(), h}, device)
                              .view({hk, 2 * dk + 2 * groupV, h});
  const at::Tensor ba = weights.load(prefix + "in_proj_ba.weight", {2 * int64_t{dims_.numValueHeads}, h}, device)
                            .view({hk, 2 * r, h});
  auto rows = [&](const at::Tensor& grouped, int64_t start, int64_t count) {
    return grouped.narrow(1, start, count).reshape({-1, h});
  };
  inProjQkv_ = at::cat({rows(qkvz, 0, dk), rows(qkvz, dk, dk), rows(qkvz, 2 * dk, groupV)}, 0);
  inProjZ_ = rows(qkvz, 2 * dk + groupV, groupV).contiguous();
  inProjB_ = rows(ba, 0, r).contiguous();
  inProjA_ = rows(ba, r, r).contiguous();
}

at::Tensor GatedDeltaNet::forward(const at::Tensor& x, LinearAttentionState* state, bool rewindable) const {
  const int64_t batch = x.size(0), steps = x.size(1);
  const int64_t hv = dims_.numValueHeads, dk = dims_.keyHeadDim, dv = dims_.valueHeadDim;
  const int64_t window = dims_.convKernel - 1, channels = dims_.convDim();

  const at::Tensor mixed = at::linear(x, inProjQkv_).transpose(1, 2);  // [B, convDim, T]
  const at::Tensor z = at::linear(x, inProjZ_).view({batch, steps, hv, dv});
  const at::Tensor b = at::linear(x, inProjB_);
  const at::Tensor a = at::linear(x, inProjA_);

  // Causal depthwise conv: prepend the cached window (zeros at the start of a sequence), so
  // prefill and decode are one code path and the result equals transformers' zero padding.
  const bool cached = state && !state->empty();
  const at::Tensor previous = cached ? state->conv : at::zeros({batch, channels, window}, mixed.options());
  const at::Tensor convInput = at::cat({previous, mixed}, 2);
  const at::Tensor conv = at::silu(causalDepthwiseConv(convInput, conv_)).transpose(1, 2);

  const int64_t r = dims_.numValueHeads / dims_.numKeyHeads;
  at::Tensor q = conv.narrow(-1, 0, dims_.keyDim()).reshape({batch, steps, dims_.numKeyHeads, dk});
  at::Tensor k = conv.narrow(-1, dims_.keyDim(), dims_.keyDim()).reshape({batch, steps, dims_.numKeyHeads, dk});
  const at::Tensor v = conv.narrow(-1, 2 * dims_.keyDim(), dims_.valueDim()).reshape({batch, steps, hv, dv});
  if (r > 1) {  // value head j reads key head j / r
    q = q.repeat_interleave(r, 2);
    k = k.repeat_interleave(r, 2);
  }
  const at::Tensor beta = at::sigmoid(b);
  const at::Tensor g = -aLog_.to(at::kFloat).exp() * at::softplus(a.to(at::kFloat) + dtBias_.to(at::kFloat));

  const at::Tensor initial = cached ? state->recurrent : at::Tensor();
  const DeltaRuleResult rule = steps == 1 ? recurrentGatedDeltaRule(q, k, v, g, beta, initial)
                                          : chunkedGatedDeltaRule(q, k, v, g, beta, initial);
  if (state) {
    state->commit();
    if (rewindable) {
      state->convInput = convInput;
      state->startState = initial.defined() ? initial : at::zeros_like(rule.finalState);
      state->q = q, state->k = k, state->v = v, state->g = g, state->beta = beta;
    }
    state->conv = convInput.narrow(2, steps, window).contiguous();
    state->recurrent = rule.finalState;
  }

  const at::Tensor normed = rmsNormGated(rule.output, z, norm_, dims_.eps);
  return at::linear(normed.reshape({batch, steps, dims_.valueDim()}), outProj_);
}

}  // namespace dfi::engine
