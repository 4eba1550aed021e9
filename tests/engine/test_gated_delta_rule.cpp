// The chunked (WY) and recurrent forms of the gated delta rule must agree, with and without an
// initial state, across chunk boundaries, with key heads shared by several value heads, and
// when a sequence is split into pieces.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "kernels/gated_delta_rule.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

struct Inputs {
  at::Tensor q, k, v, g, beta, state;
};

Inputs randomInputs(int64_t batch, int64_t steps, int64_t heads, int64_t dk, int64_t dv,
                    uint64_t seed) {
  at::manual_seed(seed);
  Inputs in;
  in.q = at::randn({batch, steps, heads, dk});
  in.k = at::randn({batch, steps, heads, dk});
  in.v = at::randn({batch, steps, heads, dv});
  in.g = -at::rand({batch, steps, heads}) * 0.5;  // log decay <= 0
  in.beta = at::rand({batch, steps, heads});
  in.state = at::randn({batch, heads, dk, dv}) * 0.3;
  return in;
}

TEST(GatedDeltaRule, ChunkedEqualsRecurrentAcrossChunkBoundaries) {
  const Inputs in = randomInputs(2, 150, 3, 16, 8, 7);
  for (const bool withState : {false, true}) {
    const at::Tensor initial = withState ? in.state : at::Tensor();
    const auto reference = recurrentGatedDeltaRule(in.q, in.k, in.v, in.g, in.beta, initial);
    for (const int64_t chunk : {64, 16, 7, 1}) {
      const auto chunked = chunkedGatedDeltaRule(in.q, in.k, in.v, in.g, in.beta, initial, chunk);
      EXPECT_LE(test::maxAbsDiff(chunked.output, reference.output), 1e-5) << "chunk " << chunk;
      EXPECT_LE(test::maxAbsDiff(chunked.finalState, reference.finalState), 1e-5)
          << "chunk " << chunk;
    }
  }
}

TEST(GatedDeltaRule, SplitSequenceContinuesFromTheState) {
  const Inputs in = randomInputs(1, 100, 2, 8, 8, 11);
  const auto whole = chunkedGatedDeltaRule(in.q, in.k, in.v, in.g, in.beta, in.state);
  auto part = [&](const at::Tensor& x, int64_t start, int64_t len) {
    return x.narrow(1, start, len);
  };
  const auto first = chunkedGatedDeltaRule(part(in.q, 0, 70), part(in.k, 0, 70), part(in.v, 0, 70),
                                           part(in.g, 0, 70), part(in.beta, 0, 70), in.state);
  const auto second =
      recurrentGatedDeltaRule(part(in.q, 70, 30), part(in.k, 70, 30), part(in.v, 70, 30),
                              part(in.g, 70, 30), part(in.beta, 70, 30), first.finalState);
  EXPECT_LE(test::maxAbsDiff(at::cat({first.output, second.output}, 1), whole.output), 1e-5);
  EXPECT_LE(test::maxAbsDiff(second.finalState, whole.finalState), 1e-5);
}

TEST(GatedDeltaRule, KeyHeadsAreSharedByTheirValueHeads) {
  // 2 key heads for 6 value heads: value head j reads key head j / 3, as with q and k repeated.
  Inputs in = randomInputs(2, 20, 6, 8, 4, 13);
  const at::Tensor q = in.q.narrow(2, 0, 2), k = in.k.narrow(2, 0, 2);
  const at::Tensor qRepeated = q.repeat_interleave(3, 2), kRepeated = k.repeat_interleave(3, 2);
  const auto expanded =
      recurrentGatedDeltaRule(qRepeated, kRepeated, in.v, in.g, in.beta, in.state);
  for (const auto& grouped : {recurrentGatedDeltaRule(q, k, in.v, in.g, in.beta, in.state),
                              chunkedGatedDeltaRule(q, k, in.v, in.g, in.beta, in.state, 8)}) {
    EXPECT_LE(test::maxAbsDiff(grouped.output, expanded.output), 1e-5);
    EXPECT_LE(test::maxAbsDiff(grouped.finalState, expanded.finalState), 1e-5);
  }
}

TEST(GatedDeltaRule, SingleStepMatchesTheClosedForm) {
  // S1 = a (I - b k k^T) S0 + b k v^T with k, q unit-normalised, o = S1^T q / sqrt(dk).
  const Inputs in = randomInputs(1, 1, 1, 4, 3, 3);
  const auto result = recurrentGatedDeltaRule(in.q, in.k, in.v, in.g, in.beta, in.state);
  const at::Tensor k = in.k[0][0][0] / in.k[0][0][0].norm();
  const at::Tensor q = in.q[0][0][0] / in.q[0][0][0].norm() / 2.0;
  const double a = std::exp(in.g.item<double>()), b = in.beta.item<double>();
  const at::Tensor s0 = in.state[0][0];
  const at::Tensor s1 =
      a * (at::eye(4) - b * at::outer(k, k)).matmul(s0) + b * at::outer(k, in.v[0][0][0]);
  EXPECT_LE(test::maxAbsDiff(result.finalState[0][0], s1), 1e-5);
  EXPECT_LE(test::maxAbsDiff(result.output[0][0][0], s1.t().matmul(q)), 1e-5);
}

}  // namespace
}  // namespace dfi::engine
