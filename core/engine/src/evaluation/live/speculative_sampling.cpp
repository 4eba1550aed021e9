#include "evaluation/live/speculative_sampling.h"

#include <limits>

#include <ATen/TensorOperators.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>

#include <c10/util/Exception.h>

namespace dfi::engine {
namespace {

std::vector<float> toFloats(const at::Tensor& t) {
  const at::Tensor cpu = t.to(at::kCPU, at::kFloat).contiguous();
  return {cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel()};
}

// The last token of a row with positive probability: where a draw lands when u * total
// rounds up to the total itself.
std::int64_t lastPositive(const at::Tensor& row) {
  const at::Tensor positive = (row > 0).nonzero();
  TORCH_CHECK(positive.numel() > 0, "a sampling distribution has no positive probability");
  return positive.max().item<std::int64_t>();
}

}  // namespace

// Op for op dflash 0.1.0's _sampling_probs, so the float32 rounding is the package's.
at::Tensor samplingProbs(const at::Tensor& logits, const SamplingOptions& sampling) {
  TORCH_CHECK(!sampling.greedy(), "samplingProbs needs a temperature above 0");
  at::Tensor scores = logits.to(at::kFloat) / sampling.temperature;
  const std::int64_t vocab = scores.size(-1);
  std::optional<at::Tensor> indices;
  if (sampling.topK > 0 && sampling.topK < vocab) {
    auto [values, chosen] = at::topk(scores, sampling.topK, -1);
    scores = values;
    indices = chosen;
  }
  at::Tensor probs = at::softmax(scores, -1);
  if (sampling.topP < 1.0) {
    auto [sorted, order] = probs.sort(-1, /*descending=*/true);
    const at::Tensor keep = (sorted.cumsum(-1) - sorted) < sampling.topP;
    sorted = sorted * keep;
    probs = at::zeros_like(probs).scatter(-1, order, sorted);
    probs = probs / probs.sum(-1, /*keepdim=*/true);
  }
  if (indices) probs = at::zeros_like(logits, probs.options()).scatter(-1, *indices, probs);
  return probs;
}

std::vector<std::int64_t> drawTokens(const at::Tensor& probs, std::span<const double> uniforms) {
  const at::Tensor rows = probs.dim() == 1 ? probs.unsqueeze(0) : probs;
  TORCH_CHECK(rows.size(0) == static_cast<std::int64_t>(uniforms.size()), "drawTokens: one uniform per distribution");
  const at::Tensor cdf = rows.to(at::kDouble).cumsum(-1);
  const at::Tensor u = at::tensor(std::vector<double>(uniforms.begin(), uniforms.end()), at::kDouble)
                           .to(cdf.device())
                           .view({-1, 1});
  const at::Tensor value = u * cdf.narrow(-1, cdf.size(-1) - 1, 1);
  const at::Tensor chosen = at::searchsorted(cdf, value, /*out_int32=*/false, /*right=*/true).view(-1).cpu();
  std::vector<std::int64_t> tokens(chosen.data_ptr<std::int64_t>(), chosen.data_ptr<std::int64_t>() + chosen.numel());
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] >= rows.size(-1)) tokens[i] = lastPositive(rows[static_cast<std::int64_t>(i)]);
  return tokens;
}

// dflash 0.1.0's _rejection_sample (without DFlash2's candidate indices), the uniforms given.
RejectionOutcome rejectionSample(std::span<const std::int64_t> drafts, const at::Tensor& targetProbs,
                                 const at::Tensor& draftProbs, std::span<const float> uniforms) {
  const auto g = static_cast<std::int64_t>(drafts.size());
  TORCH_CHECK(targetProbs.size(0) == g + 1 && uniforms.size() == drafts.size() && (g == 0 || draftProbs.size(0) == g),
              "rejectionSample: g drafts need g + 1 target rows, g draft rows and g uniforms");
  RejectionOutcome out;
  if (g > 0) {
    const at::Tensor ids = at::tensor(std::vector<std::int64_t>(drafts.begin(), drafts.end()), at::kLong)
                               .to(targetProbs.device())
                               .view({-1, 1});
    out.p = toFloats(targetProbs.narrow(0, 0, g).gather(-1, ids));
    out.q = toFloats(draftProbs.gather(-1, ids));
  }
  // float32 u * q < p, as torch.rand_like(q) * q < p: a draft the drafter cannot propose
  // (q = 0) is never rejected by the test, as in the package.
  while (out.accepted < g && uniforms[static_cast<std::size_t>(out.accepted)] * out.q[static_cast<std::size_t>(out.accepted)] <
                                 out.p[static_cast<std::size_t>(out.accepted)])
    ++out.accepted;
  if (out.accepted == g) {
    out.next = targetProbs[g];
    return out;
  }
  at::Tensor residual = targetProbs[out.accepted].clone();
  residual.sub_(draftProbs[out.accepted]);
  residual.clamp_min_(0);
  const at::Tensor total = residual.sum();
  out.next = at::where(total > 0, residual / total.clamp_min(std::numeric_limits<float>::min()),
                       targetProbs[out.accepted]);
  return out;
}

}  // namespace dfi::engine
