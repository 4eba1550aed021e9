#include "evaluation/teacher_forced/dflash_parity.h"

#include <algorithm>
#include <numeric>
#include <string>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "kernels/argmax.h"

namespace dfi::engine {

at::Tensor inferencePathLogits(const DFlashDrafter& drafter, const at::Tensor& features, const at::Tensor& tokens,
                               std::span<const std::int64_t> anchors, analysis::MaskVariant variant,
                               DrafterProbes* probes, DrafterKvCache* carried) {
  const std::int64_t length = features.size(0);
  if (anchors.empty()) throw UsageError("no anchors to draft", {.item = "anchors"});
  std::vector<std::size_t> order(anchors.size());
  std::iota(order.begin(), order.end(), 0);
  // Context lengths grow with the anchor, so one cache serves every block in anchor order.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return anchors[a] < anchors[b]; });
  const at::Tensor tokensCpu = tokens.to(at::kCPU, at::kLong).contiguous();
  const std::int64_t* token = tokensCpu.data_ptr<std::int64_t>();
  DrafterKvCache own = drafter.newCache();
  DrafterKvCache& cache = carried ? *carried : own;
  std::vector<at::Tensor> logits(anchors.size());
  std::vector<std::vector<at::Tensor>> layerOutputs(anchors.size());
  for (std::size_t j : order) {
    const std::int64_t anchor = anchors[j];
    if (anchor < 0 || anchor >= length)
      throw UsageError("anchor " + std::to_string(anchor) + " is outside the sequence of " + std::to_string(length) +
                           " positions",
                       {.item = "anchors"});
    const std::int64_t context = analysis::inferenceContextLength(variant, anchor);
    if (cache.length() > context) cache = drafter.newCache();  // a carried cache past this anchor
    DrafterProbes blockProbes{.wantLayerOutputs = probes && probes->wantLayerOutputs};
    logits[j] = drafter.draft(cache, features.narrow(0, cache.length(), context - cache.length()),
                              token[anchor], anchor, variant, &blockProbes);
    layerOutputs[j] = std::move(blockProbes.layerOutputs);
  }
  if (probes && probes->wantLayerOutputs) probes->layerOutputs = concatenatePerLayer(layerOutputs);
  return at::stack(logits, 0);
}

std::vector<BlockParity> compareDraftPaths(const at::Tensor& inference, const at::Tensor& training, double tolerance) {
  if (inference.sizes() != training.sizes())
    throw UsageError("the inference and training paths gave logits of different shapes", {.item = "parity"});
  const at::Tensor a = inference.to(at::kCPU, at::kFloat), b = training.to(at::kCPU, at::kFloat);
  // Equal entries differ by 0, -inf ones included (a reduced draft vocabulary's ids it lacks,
  // models/draft_vocabulary.h), where a - b would be NaN.
  const at::Tensor diff = (a - b).abs().masked_fill_(a.eq(b), 0).amax({1, 2}).to(at::kDouble).contiguous();  // [N]
  const at::Tensor agree = argmaxLastDim(a).eq(argmaxLastDim(b)).to(at::kByte).contiguous();  // [N, B-1]
  const double* worst = diff.data_ptr<double>();
  const std::uint8_t* same = agree.data_ptr<std::uint8_t>();
  const std::int64_t slots = a.size(1);
  std::vector<BlockParity> result;
  for (std::int64_t n = 0; n < a.size(0); ++n) {
    BlockParity parity;
    parity.maxAbsDiff = worst[n];
    int agreeing = 0;
    for (std::int64_t slot = 0; slot < slots; ++slot) {
      agreeing += same[n * slots + slot];
      if (!same[n * slots + slot] && parity.firstDifferingSlot < 0) parity.firstDifferingSlot = static_cast<int>(slot);
    }
    parity.argmaxAgreement = slots ? static_cast<double>(agreeing) / static_cast<double>(slots) : 1.0;
    parity.flagged = parity.maxAbsDiff > tolerance || parity.firstDifferingSlot >= 0;
    result.push_back(parity);
  }
  return result;
}

}  // namespace dfi::engine
