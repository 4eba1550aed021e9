#include "evaluation/live/draft_distribution.h"

#include <stdexcept>

#include <ATen/ops/logsumexp.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/topk.h>

namespace dfi::engine {

void fillTopK(const at::Tensor& logits, int k, std::vector<session::TokenId>& ids, std::vector<float>& probs) {
  // As the DDTree reference: top-k of the fp32 logits, then log-softmax by subtracting logZ.
  const at::Tensor full = logits.to(at::kFloat);
  const auto [top, indices] = full.topk(k, -1);
  const at::Tensor p = top.sub(at::logsumexp(full, -1, true)).exp().to(at::kCPU).contiguous();
  const at::Tensor i = indices.to(at::kCPU, at::kInt).contiguous();
  ids.assign(i.data_ptr<std::int32_t>(), i.data_ptr<std::int32_t>() + i.numel());
  probs.assign(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
}

std::vector<float> distributionOverlap(const at::Tensor& targetLogits, const at::Tensor& draftLogits) {
  if (targetLogits.sizes() != draftLogits.sizes())
    throw std::logic_error("distributionOverlap: target and draft logits differ in shape");
  const at::Tensor p = at::softmax(targetLogits.to(at::kFloat), -1);
  const at::Tensor q = at::softmax(draftLogits.to(at::kFloat), -1);
  const at::Tensor overlap = at::minimum(p, q).sum(-1).to(at::kCPU).contiguous();
  return {overlap.data_ptr<float>(), overlap.data_ptr<float>() + overlap.numel()};
}

}  // namespace dfi::engine
