#include "evaluation/live/step_cost.h"

#include <algorithm>
#include <chrono>

#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include "dfi/base/error.h"
#include "evaluation/live/dflash_decode.h"
#include "kernels/argmax.h"

namespace dfi::engine {
namespace {

// Median milliseconds of `repeats` calls of `call` after one untimed (caches, allocator, lazy
// kernel choice). `call` returns a tensor computed by the work; copying it to the host waits for
// an accelerator to finish, so the time is the work's, not its launch's.
template <typename Call>
double medianMilliseconds(int repeats, Call call) {
  (void)call().to(at::kCPU);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    (void)call().to(at::kCPU);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::ranges::nth_element(times, times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2));
  return times[times.size() / 2];
}

at::Tensor tokensTensor(std::span<const std::int64_t> ids) {
  return at::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), at::kLong).view({1, -1});
}

}  // namespace

std::vector<int> costTokenCounts(int blockSize, int largestTreeBudget) {
  const int largest = std::max(blockSize, largestTreeBudget + 1);
  std::vector<int> counts;
  for (int n = 1; n < largest; n *= 2) counts.push_back(n);
  counts.push_back(largest);
  if (std::ranges::find(counts, blockSize) == counts.end()) counts.push_back(blockSize);
  std::ranges::sort(counts);
  return counts;
}

analysis::CostModel measureStepCost(const TargetModel& target, const DFlashDrafter& drafter,
                                    std::span<const std::int64_t> context, const StepCostOptions& options) {
  if (context.size() < 2) throw UsageError("the cost calibration needs a prompt of two tokens or more");
  if (options.repeats < 1) throw UsageError("the cost calibration needs one timed repeat or more");
  c10::InferenceMode inference;
  const std::vector<int>& taps = drafter.config().targetLayerIds;
  ModelCache cache = target.newCache();
  const ForwardOutput prefill =
      target.forward(tokensTensor(context), &cache, {.tapLayers = taps, .logits = true, .logitsToKeep = 1});
  const auto length = static_cast<std::int64_t>(context.size());
  analysis::CostModel cost;
  for (const int n : options.verifiedTokens) {
    // Which tokens are verified does not change the work: the context's last ones, repeated.
    std::vector<std::int64_t> block(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) block[static_cast<std::size_t>(i)] = context[context.size() - 1 - i % (context.size() - 1)];
    cost.target.push_back({n, medianMilliseconds(options.repeats, [&] {
                             const ForwardOutput verify = target.forward(
                                 tokensTensor(block), &cache, {.tapLayers = taps, .logits = true, .rewindable = true});
                             cache.crop(length);
                             return argmaxLastDim(verify.logits[0]);
                           })});
  }
  DrafterKvCache draftCache = drafter.newCache();
  const at::Tensor features = concatenatedTaps(prefill.taps);
  // All of the context but its last position, once; each timed block then appends that one.
  (void)drafter.draft(draftCache, features.narrow(0, 0, length - 1), context.back(), length - 1,
                      analysis::MaskVariant::Reference);
  const at::Tensor newest = features.narrow(0, length - 1, 1);
  cost.drafterMilliseconds = medianMilliseconds(options.repeats, [&] {
    draftCache.crop(length - 1);
    return argmaxLastDim(drafter.draft(draftCache, newest, context.back(), length, analysis::MaskVariant::Reference));
  });
  return cost;
}

}  // namespace dfi::engine
