#include "evaluation/dflash_decode.h"

#include <algorithm>
#include <string>

#include <ATen/ops/cat.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include "dfi/analysis/acceptance.h"
#include "dfi/base/error.h"
#include "evaluation/draft_distribution.h"
#include "kernels/argmax.h"
#include "kernels/tensor_cast.h"
#include "dfi/session/record_fields.h"

namespace dfi::engine {
namespace {

std::vector<std::int64_t> toVector(const at::Tensor& ids) {
  const at::Tensor cpu = ids.to(at::kCPU, at::kLong).contiguous();
  return {cpu.data_ptr<std::int64_t>(), cpu.data_ptr<std::int64_t>() + cpu.numel()};
}

std::vector<session::TokenId> toTokenIds(std::span<const std::int64_t> ids) {
  return {ids.begin(), ids.end()};
}

at::Tensor idsTensor(std::span<const std::int64_t> ids) {
  return at::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), at::kLong).view({1, -1});
}

}  // namespace

double SpeculativeResult::meanAcceptLength() const {
  analysis::AcceptanceTally tally;
  for (const session::StepRecord& step : steps) tally.add(step.acceptLength());
  return tally.tau().value_or(0.0);
}

at::Tensor concatenatedTaps(const std::vector<at::Tensor>& taps) {
  std::vector<at::Tensor> rows;
  for (const at::Tensor& tap : taps) rows.push_back(onDevice(tap[0], taps.front().device()));
  return at::cat(rows, -1);
}

SpeculativeResult speculativeDecode(const TargetModel& target, const DFlashDrafter& drafter,
                                    std::span<const std::int64_t> prompt,
                                    const SpeculativeOptions& options) {
  if (prompt.empty()) throw UsageError("speculative decoding needs a non-empty prompt");
  c10::InferenceMode inference;
  const int b = drafter.blockSize();
  const std::vector<int>& taps = drafter.config().targetLayerIds;

  SpeculativeResult result;
  result.promptLength = static_cast<std::int64_t>(prompt.size());
  result.tokens.assign(prompt.begin(), prompt.end());

  ModelCache targetCache = target.newCache();
  const ForwardOutput prefill =
      target.forward(idsTensor(prompt), &targetCache, {.tapLayers = taps, .logits = true, .logitsToKeep = 1});
  result.tokens.push_back(argmaxLastDim(prefill.logits[0][-1]).item<std::int64_t>());
  at::Tensor newContext = concatenatedTaps(prefill.taps);  // features the drafter has not seen

  DrafterKvCache draftCache = drafter.newCache();
  std::int64_t start = result.promptLength;  // position of the anchor: committed, not yet verified
  auto stopped = [&](std::size_t from) {
    return std::any_of(result.tokens.begin() + static_cast<std::ptrdiff_t>(from), result.tokens.end(),
                       [&](std::int64_t t) {
                         return std::find(options.stopTokens.begin(), options.stopTokens.end(), t) !=
                                options.stopTokens.end();
                       });
  };
  bool done = false;
  while (!done && start < result.promptLength + options.maxNewTokens) {
    const std::int64_t anchorToken = result.tokens[static_cast<std::size_t>(start)];
    const at::Tensor draftLogits = drafter.draft(draftCache, newContext, anchorToken, start);
    const std::vector<std::int64_t> drafts = toVector(argmaxLastDim(draftLogits));

    std::vector<std::int64_t> block{anchorToken};
    block.insert(block.end(), drafts.begin(), drafts.end());
    const ForwardOutput verify = target.forward(
        idsTensor(block), &targetCache, {.tapLayers = taps, .logits = true, .rewindable = true});
    // posterior[i]: the target's token for position start+i+1, given the block up to slot i.
    const std::vector<std::int64_t> posterior = toVector(argmaxLastDim(verify.logits[0]));

    int accepted = 0;
    while (accepted < b - 1 && drafts[static_cast<std::size_t>(accepted)] == posterior[static_cast<std::size_t>(accepted)])
      ++accepted;
    const std::int64_t bonus = posterior[static_cast<std::size_t>(accepted)];

    session::StepRecord step;
    step.stepIndex = static_cast<std::int32_t>(result.steps.size());
    step.mode = session::EvaluationMode::Live;
    step.anchorPosition = start;
    step.anchorToken = static_cast<session::TokenId>(anchorToken);
    step.draftTokens = toTokenIds(drafts);
    step.targetTokens = toTokenIds(std::span(posterior).first(static_cast<std::size_t>(b - 1)));
    step.acceptedCount = accepted;
    step.bonusToken = static_cast<session::TokenId>(bonus);
    step.maskVariant = std::string(enumName(analysis::MaskVariant::Reference));
    if (options.topK > 0) fillTopK(draftLogits, options.topK, step.topKIds, step.topKProbs);
    result.steps.push_back(std::move(step));

    // The anchor and the accepted drafts are in the target cache now; the bonus is the next
    // anchor and has not been through the target.
    result.tokens.insert(result.tokens.end(), drafts.begin(), drafts.begin() + accepted);
    result.tokens.push_back(bonus);
    start += accepted + 1;
    targetCache.crop(start);
    newContext = concatenatedTaps(verify.taps).narrow(0, 0, accepted + 1);
    done = stopped(prompt.size());  // the reference checks the whole generated part
  }
  return result;
}

}  // namespace dfi::engine
