#include "kernels/gated_delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "kernels/cpu_clones.h"
#include "kernels/kernel_path.h"
#include "kernels/tensor_cast.h"

namespace dfi::engine {
namespace {

// The same eps transformers and newer fla use: x * rsqrt(sum(x^2) + 1e-6).
at::Tensor l2Normalise(const at::Tensor& x) {
  return x * at::rsqrt((x * x).sum(-1, /*keepdim=*/true) + 1e-6);
}

// The delta rule accumulates over the whole sequence, so its rounding grows with the length and
// depends on the order of summation: the chunked form (prefill) and the recurrent form (decode
// steps) of an fp32 model drift apart by ~1e-5 relative after a few layers. An fp32 model's
// rule therefore runs in fp64, which makes every schedule (prefill, steps, any chunking) agree
// to ~1e-7; the rule is a small part of the layer's work. Half-precision models keep the fp32
// state of the reference kernels (docs/qwen.md 3.3).
at::ScalarType accumulationType(const at::Tensor& v) {
  return v.scalar_type() == at::kFloat || v.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

// Inputs moved to [B, H, T, ...] in the accumulation type, q/k normalised and q scaled.
struct HeadMajor {
  at::Tensor q, k, v, g, beta, state;
};

HeadMajor prepare(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const at::Tensor& g, const at::Tensor& beta, const at::Tensor& initialState) {
  const at::ScalarType type = accumulationType(v);
  auto headMajor = [type](const at::Tensor& x) { return x.transpose(1, 2).to(type).contiguous(); };
  const int64_t group = v.size(2) / k.size(2);  // value heads per key head
  auto perValueHead = [group](const at::Tensor& x) {
    return group > 1 ? x.repeat_interleave(group, 2) : x;
  };
  HeadMajor p;
  p.q =
      l2Normalise(headMajor(perValueHead(q))) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  p.k = l2Normalise(headMajor(perValueHead(k)));
  p.v = headMajor(v);
  p.g = headMajor(g);
  p.beta = headMajor(beta);
  p.state = initialState.defined()
                ? initialState.to(type).clone()
                : at::zeros({v.size(0), v.size(2), k.size(-1), v.size(-1)}, p.v.options());
  return p;
}

// The recurrence of one (batch, head) pair over `steps` tokens, in place on `state` (dk x dv,
// row-major). Rows of q and k are `rowStrideK` elements apart, of v and out `rowStrideV`, g and
// beta `scalarStride`.
// Per token: decay, read S^T k, delta write of beta (v - S^T k), then the output S^T q after the
// write, exactly the order of the reference recurrence (docs/qwen.md 3.3).
template <typename Acc>
[[gnu::always_inline]] inline void recurHead(const Acc* q, const Acc* k, const Acc* v, const Acc* g,
                                             const Acc* beta, int64_t steps, int64_t rowStrideK,
                                             int64_t rowStrideV, int64_t scalarStride, int64_t dk,
                                             int64_t dv, Acc scale, Acc* state, Acc* out) {
  std::vector<Acc> qn(dk), kn(dk), predicted(dv), delta(dv);
  auto normalised = [dk](const Acc* x, Acc factor, Acc* into) {  // x * rsqrt(sum(x^2) + 1e-6)
    Acc sumSquares = 0;
    for (int64_t i = 0; i < dk; ++i) sumSquares += x[i] * x[i];
    const Acc inverse = Acc{1} / std::sqrt(sumSquares + Acc{1e-6});
    for (int64_t i = 0; i < dk; ++i) into[i] = x[i] * inverse * factor;
  };
  for (int64_t t = 0; t < steps; ++t) {
    normalised(k + t * rowStrideK, Acc{1}, kn.data());
    normalised(q + t * rowStrideK, scale, qn.data());
    const Acc decay = std::exp(g[t * scalarStride]), b = beta[t * scalarStride];
    std::fill(predicted.begin(), predicted.end(), Acc{0});
    for (int64_t i = 0; i < dk; ++i) {
      Acc* row = state + i * dv;
      for (int64_t j = 0; j < dv; ++j) {
        row[j] *= decay;
        predicted[j] += row[j] * kn[i];
      }
    }
    const Acc* vt = v + t * rowStrideV;
    for (int64_t j = 0; j < dv; ++j) delta[j] = (vt[j] - predicted[j]) * b;
    Acc* ot = out + t * rowStrideV;
    std::fill(ot, ot + dv, Acc{0});
    for (int64_t i = 0; i < dk; ++i) {
      Acc* row = state + i * dv;
      for (int64_t j = 0; j < dv; ++j) {
        row[j] += kn[i] * delta[j];
        ot[j] += row[j] * qn[i];
      }
    }
  }
}

// One instruction-set clone per accumulation type; recurHead is inlined into each.
#define DFI_RECUR_HEAD(Acc)                                                                      \
  DFI_CPU_CLONES void recurHeadCloned(const Acc* q, const Acc* k, const Acc* v, const Acc* g,    \
                                      const Acc* beta, int64_t steps, int64_t rowStrideK,        \
                                      int64_t rowStrideV, int64_t scalarStride, int64_t dk,      \
                                      int64_t dv, Acc scale, Acc* state, Acc* out) {             \
    recurHead<Acc>(q, k, v, g, beta, steps, rowStrideK, rowStrideV, scalarStride, dk, dv, scale, \
                   state, out);                                                                  \
  }
DFI_RECUR_HEAD(double)
DFI_RECUR_HEAD(float)
#undef DFI_RECUR_HEAD

// The recurrence as a loop over raw memory: a step of the ATen formulation is ~17 small ops
// per token, which dominated a CPU verification step of a small model.
template <typename Acc>
DeltaRuleResult recurrentOnCpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& g, const at::Tensor& beta,
                               const at::Tensor& initialState) {
  const int64_t batch = v.size(0), steps = v.size(1), heads = v.size(2), dk = k.size(-1),
                dv = v.size(-1);
  const int64_t keyHeads = k.size(2), group = heads / keyHeads;
  // Inputs stay token-major, [B, T, H, ...], in the accumulation type.
  auto tokenMajor = [](const at::Tensor& x) { return asType(x, c10::CppTypeToScalarType<Acc>::value).contiguous(); };
  const at::Tensor Q = tokenMajor(q), K = tokenMajor(k), V = tokenMajor(v), G = tokenMajor(g),
                   Beta = tokenMajor(beta);
  at::Tensor state = at::empty({batch, heads, dk, dv}, V.options());
  if (initialState.defined())
    state.copy_(initialState);
  else
    state.zero_();
  at::Tensor out = at::empty({batch, steps, heads, dv}, V.options());
  const Acc scale = Acc{1} / std::sqrt(static_cast<Acc>(dk));
  // Heads in parallel, but a decode step of a small model stays on one thread (the work of
  // a head is steps * dk * dv multiply-adds, times four).
  const int64_t headsPerTask = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, steps * dk * dv));
  at::parallel_for(0, batch * heads, headsPerTask, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      const int64_t rowK = (b * steps * keyHeads + h / group) * dk,
                    rowV = (b * steps * heads + h) * dv;
      const int64_t scalar = b * steps * heads + h;
      recurHeadCloned(Q.data_ptr<Acc>() + rowK, K.data_ptr<Acc>() + rowK, V.data_ptr<Acc>() + rowV,
                      G.data_ptr<Acc>() + scalar, Beta.data_ptr<Acc>() + scalar, steps,
                      keyHeads * dk, heads * dv, heads, dk, dv, scale,
                      state.data_ptr<Acc>() + bh * dk * dv, out.data_ptr<Acc>() + rowV);
    }
  });
  return {asType(out, v.scalar_type()), state};
}

}  // namespace

DeltaRuleResult recurrentGatedDeltaRule(const at::Tensor& q, const at::Tensor& k,
                                        const at::Tensor& v, const at::Tensor& g,
                                        const at::Tensor& beta, const at::Tensor& initialState) {
  // Other devices run the same recurrence as one chunk (a single launch sequence instead of a
  // kernel per token and operation).
  if (!takesCpuKernel(v)) return chunkedGatedDeltaRule(q, k, v, g, beta, initialState, v.size(1));
  return accumulationType(v) == at::kDouble ? recurrentOnCpu<double>(q, k, v, g, beta, initialState)
                                            : recurrentOnCpu<float>(q, k, v, g, beta, initialState);
}

namespace {
thread_local DeltaRuleForm forcedForm = DeltaRuleForm::Fastest;
}  // namespace

ScopedDeltaRuleForm::ScopedDeltaRuleForm(DeltaRuleForm form) : previous_(forcedForm) { forcedForm = form; }
ScopedDeltaRuleForm::~ScopedDeltaRuleForm() { forcedForm = previous_; }

DeltaRuleResult gatedDeltaRule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& g, const at::Tensor& beta,
                               const at::Tensor& initialState) {
  const bool recurrent = forcedForm == DeltaRuleForm::Fastest ? takesCpuKernel(v) : forcedForm == DeltaRuleForm::Recurrent;
  return recurrent ? recurrentGatedDeltaRule(q, k, v, g, beta, initialState)
                   : chunkedGatedDeltaRule(q, k, v, g, beta, initialState);
}

DeltaRuleResult chunkedGatedDeltaRule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                      const at::Tensor& g, const at::Tensor& beta,
                                      const at::Tensor& initialState, int64_t chunkSize) {
  HeadMajor p = prepare(q, k, v, g, beta, initialState);
  const int64_t steps = v.size(1);
  // A sequence shorter than a chunk is one chunk of its own length: a verify block of 16
  // padded to 64 would do 16x the intra-chunk work (the fp64 rule agrees across chunkings).
  chunkSize = std::max<int64_t>(1, std::min(chunkSize, steps));
  const int64_t pad = (chunkSize - steps % chunkSize) % chunkSize;
  const int64_t chunks = (steps + pad) / chunkSize;
  // Zero padding at the end is inert: beta = 0 writes nothing and g = 0 does not decay.
  auto chunked = [&](const at::Tensor& x) {
    const at::Tensor padded = at::constant_pad_nd(x, {0, 0, 0, pad});
    return padded.reshape({x.size(0), x.size(1), chunks, chunkSize, x.size(-1)});
  };
  auto chunkedScalar = [&](const at::Tensor& x) {
    return at::constant_pad_nd(x, {0, pad}).reshape({x.size(0), x.size(1), chunks, chunkSize});
  };
  const at::Tensor Q = chunked(p.q), K = chunked(p.k), V = chunked(p.v);
  const at::Tensor beta4 = chunkedScalar(p.beta).unsqueeze(-1);
  const at::Tensor G = chunkedScalar(p.g).cumsum(-1);  // log decay from chunk start to i

  const auto opts = at::TensorOptions().dtype(at::kBool).device(v.device());
  const at::Tensor strictlyUpper = at::ones({chunkSize, chunkSize}, opts).triu(1);
  // D[i, j] = exp(G_i - G_j) for j <= i, else 0 (masked before exp so nothing overflows).
  const at::Tensor D =
      (G.unsqueeze(-1) - G.unsqueeze(-2)).masked_fill(strictlyUpper, -INFINITY).exp();

  // UT transform: A = I + strictly_lower((beta K) K^T * D);
  // U = A^-1 (beta V), W = A^-1 (beta K exp(G)).
  const at::Tensor kBeta = K * beta4;
  const at::Tensor A = at::matmul(kBeta, K.transpose(-1, -2)) * D;
  const at::Tensor U = at::linalg_solve_triangular(A, V * beta4, /*upper=*/false, /*left=*/true,
                                                   /*unitriangular=*/true);
  const at::Tensor W =
      at::linalg_solve_triangular(A, kBeta * G.exp().unsqueeze(-1), false, true, true);

  const at::Tensor intra = at::matmul(Q, K.transpose(-1, -2)) * D;  // includes the diagonal
  const at::Tensor qDecayed = Q * G.exp().unsqueeze(-1);
  const at::Tensor gLast = G.narrow(-1, chunkSize - 1, 1);  // [B, H, N, 1]
  const at::Tensor kToEnd = K * (gLast - G).exp().unsqueeze(-1);
  const at::Tensor chunkDecay = gLast.exp().unsqueeze(-1);  // [B, H, N, 1, 1]

  at::Tensor state = p.state;
  std::vector<at::Tensor> outputs;
  outputs.reserve(chunks);
  for (int64_t c = 0; c < chunks; ++c) {
    const at::Tensor vNew = U.select(2, c) - at::matmul(W.select(2, c), state);
    outputs.push_back(at::matmul(qDecayed.select(2, c), state) +
                      at::matmul(intra.select(2, c), vNew));
    state =
        state * chunkDecay.select(2, c) + at::matmul(kToEnd.select(2, c).transpose(-1, -2), vNew);
  }
  const at::Tensor out =
      at::stack(outputs, 2).reshape({v.size(0), v.size(2), chunks * chunkSize, v.size(-1)});
  return {out.narrow(2, 0, steps).transpose(1, 2).contiguous().to(v.scalar_type()), state};
}

}  // namespace dfi::engine
