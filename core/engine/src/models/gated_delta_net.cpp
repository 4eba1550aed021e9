#include "models/gated_delta_net.h"

#include <cmath>

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include "io/weight_loader.h"
#include "kernels/float_casts.h"
#include "kernels/gated_delta_rule.h"
#include "kernels/kernel_path.h"
#include "kernels/norms.h"
#include "kernels/projection.h"
#include "kernels/silu.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {
namespace {

// Depthwise causal conv over `input` [B, C, window + T] with `weight` [C, 1, K], then SiLU, as
// [B, T, C]: the K taps as K shifted multiply-adds in fp32, rounded once, then SiLU. at::conv1d
// computes the same, but its CPU depthwise kernel for bf16 is ~25x slower than fp32 (40 ms per
// 2048-channel decode step on 2 cores), which made bf16 decode slower than fp32.
at::Tensor causalConvSiluWithAten(const at::Tensor& input, const at::Tensor& weight) {
  const int64_t taps = weight.size(-1), steps = input.size(2) - taps + 1;
  const at::Tensor w = weight.squeeze(1).to(at::kFloat);  // [C, K]
  at::Tensor out = input.narrow(2, 0, steps).to(at::kFloat) * w.select(1, 0).unsqueeze(-1);
  for (int64_t j = 1; j < taps; ++j)
    out.addcmul_(input.narrow(2, j, steps).to(at::kFloat), w.select(1, j).unsqueeze(-1));
  return at::silu(out.to(input.scalar_type())).transpose(1, 2);
}

// The same on the CPU as one pass (the ATen form is ~16 small ops per call).
at::Tensor causalConvSilu(const at::Tensor& inputAnyLayout, const at::Tensor& weight) {
  if (!takesCpuKernel(inputAnyLayout)) return causalConvSiluWithAten(inputAnyLayout, weight);
  const at::Tensor input = inputAnyLayout.contiguous();
  const at::Tensor w = asType(weight, at::kFloat).contiguous();
  const int64_t batch = input.size(0), channels = input.size(1), width = input.size(2);
  const int64_t taps = weight.size(-1), steps = width - taps + 1;
  at::Tensor out = at::empty({batch, steps, channels}, input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, input.scalar_type(), "causalConvSilu", [&] {
    const scalar_t* in = input.data_ptr<scalar_t>();
    const float* ws = w.data_ptr<float>();
    scalar_t* os = out.data_ptr<scalar_t>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < channels; ++c) {
        const scalar_t* row = in + (b * channels + c) * width;
        const float* wc = ws + c * taps;
        for (int64_t t = 0; t < steps; ++t) {
          float sum = toFloat(row[t]) * wc[0];
          for (int64_t j = 1; j < taps; ++j) sum += toFloat(row[t + j]) * wc[j];
          os[(b * steps + t) * channels + c] = fromFloat<scalar_t>(silu(roundedTo<scalar_t>(sum)));
        }
      }
  });
  return out;
}

// Qwen3-Next groups the fused rows by key head: per head g, [q_g | k_g | v_g (r*dv) | z_g (r*dv)]
// and [b_g (r) | a_g (r)]. Regrouped once into Qwen3.5's order (all q, all k, all v, z, b, a),
// one forward serves both.
at::Tensor regroupedQwen3NextProjections(const WeightLoader& weights, const std::string& prefix,
                                         const GatedDeltaNetDims& dims, at::Device device) {
  const int64_t h = dims.hiddenSize, hk = dims.numKeyHeads, dk = dims.keyHeadDim;
  const int64_t r = dims.numValueHeads / dims.numKeyHeads, groupV = r * dims.valueHeadDim;
  const at::Tensor qkvz =
      weights.load(prefix + "in_proj_qkvz.weight", {2 * dims.keyDim() + 2 * dims.valueDim(), h}, device)
          .view({hk, 2 * dk + 2 * groupV, h});
  const at::Tensor ba =
      weights.load(prefix + "in_proj_ba.weight", {2 * int64_t{dims.numValueHeads}, h}, device).view({hk, 2 * r, h});
  auto rows = [&](const at::Tensor& grouped, int64_t start, int64_t count) {
    return grouped.narrow(1, start, count).reshape({-1, h});
  };
  return at::cat({rows(qkvz, 0, dk), rows(qkvz, dk, dk), rows(qkvz, 2 * dk, groupV), rows(qkvz, 2 * dk + groupV, groupV),
                  rows(ba, 0, r), rows(ba, r, r)});
}

}  // namespace

void LinearAttentionState::rewind(int64_t tokens) {
  const int64_t recorded = recordedTokens();
  if (tokens >= recorded) return;
  const int64_t window = conv.size(2);
  // Recompute the state over the kept tokens from the state before the forward (see
  // ModelCache for why this beats storing a state per token).
  recurrent = tokens == 0 ? startState
                          : gatedDeltaRule(q.narrow(1, 0, tokens), k.narrow(1, 0, tokens), v.narrow(1, 0, tokens),
                                           g.narrow(1, 0, tokens), beta.narrow(1, 0, tokens), startState)
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
    inProj_ = regroupedQwen3NextProjections(weights, prefix, dims, device);
  } else {
    inProj_ = at::cat({weights.load(prefix + "in_proj_qkv.weight", {dims.convDim(), h}, device),
                       weights.load(prefix + "in_proj_z.weight", {dims.valueDim(), h}, device),
                       weights.load(prefix + "in_proj_b.weight", {hv, h}, device),
                       weights.load(prefix + "in_proj_a.weight", {hv, h}, device)});
  }
  conv_ = weights.load(prefix + "conv1d.weight", {dims.convDim(), 1, dims.convKernel}, device);
  dtBias_ = weights.load(prefix + "dt_bias", {hv}, device);
  aLog_ = weights.load(prefix + "A_log", {hv}, device);
  norm_ = weights.load(prefix + "norm.weight", {dims.valueHeadDim}, device);
  outProj_ = weights.load(prefix + "out_proj.weight", {h, dims.valueDim()}, device);
}

at::Tensor GatedDeltaNet::forward(const at::Tensor& x, LinearAttentionState* state, bool rewindable) const {
  const int64_t batch = x.size(0), steps = x.size(1);
  const int64_t hv = dims_.numValueHeads, dk = dims_.keyHeadDim, dv = dims_.valueHeadDim;
  const int64_t window = dims_.convKernel - 1, channels = dims_.convDim();

  const at::Tensor projected = project(x, inProj_);  // [B, T, convDim | valueDim | hv | hv]
  const at::Tensor mixed = projected.narrow(-1, 0, channels).transpose(1, 2);  // [B, convDim, T]
  const at::Tensor z = projected.narrow(-1, channels, dims_.valueDim()).view({batch, steps, hv, dv});
  const at::Tensor b = projected.narrow(-1, channels + dims_.valueDim(), hv);
  const at::Tensor a = projected.narrow(-1, channels + dims_.valueDim() + hv, hv);

  // Causal depthwise conv: prepend the cached window (zeros at the start of a sequence), so
  // prefill and decode are one code path and the result equals transformers' zero padding.
  const bool cached = state && !state->empty();
  const at::Tensor previous = cached ? state->conv : at::zeros({batch, channels, window}, mixed.options());
  const at::Tensor convInput = at::cat({previous, mixed}, 2);
  const at::Tensor conv = causalConvSilu(convInput, conv_);

  // Value head j reads key head j / (hv / hk): the rule takes q and k per key head.
  const at::Tensor q = conv.narrow(-1, 0, dims_.keyDim()).reshape({batch, steps, dims_.numKeyHeads, dk});
  const at::Tensor k = conv.narrow(-1, dims_.keyDim(), dims_.keyDim()).reshape({batch, steps, dims_.numKeyHeads, dk});
  const at::Tensor v = conv.narrow(-1, 2 * dims_.keyDim(), dims_.valueDim()).reshape({batch, steps, hv, dv});
  const at::Tensor beta = at::sigmoid(b);
  const at::Tensor g =
      -asType(aLog_, at::kFloat).exp() * at::softplus(asType(a, at::kFloat) + asType(dtBias_, at::kFloat));

  const at::Tensor initial = cached ? state->recurrent : at::Tensor();
  const DeltaRuleResult rule = gatedDeltaRule(q, k, v, g, beta, initial);
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
  return project(normed.reshape({batch, steps, dims_.valueDim()}), outProj_);
}

}  // namespace dfi::engine
