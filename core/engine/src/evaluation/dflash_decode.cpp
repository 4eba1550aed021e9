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
  const bool dflash = options.counting == StepCounting::Dflash;
  const int b = drafter.blockSize();
  const std::vector<int>& taps = drafter.config().targetLayerIds;

  SpeculativeResult result;
  result.promptLength = static_cast<std::int64_t>(prompt.size());
  result.tokens.assign(prompt.begin(), prompt.end());
  const std::int64_t maxLength = result.promptLength + options.maxNewTokens;

  ModelCache targetCache = target.newCache();
  const ForwardOutput prefill =
      target.forward(idsTensor(prompt), &targetCache, {.tapLayers = taps, .logits = true, .logitsToKeep = 1});
  result.tokens.push_back(argmaxLastDim(prefill.logits[0][-1]).item<std::int64_t>());
  at::Tensor newContext = concatenatedTaps(prefill.taps);  // features the drafter has not seen

  DrafterKvCache draftCache = drafter.newCache();
  std::int64_t start = result.promptLength;  // position of the anchor: committed, not yet verified
  auto isStop = [&](std::int64_t token) {
    return std::find(options.stopTokens.begin(), options.stopTokens.end(), token) != options.stopTokens.end();
  };
  // dflash makes no step when the first generated token stops, and none that could only
  // verify the anchor (start + 1 == maxLength).
  bool done = dflash && isStop(result.tokens.back());
  while (!done && (dflash ? start + 1 < maxLength : start < maxLength)) {
    const int verified = dflash ? static_cast<int>(std::min<std::int64_t>(b, maxLength - start)) : b;
    const std::int64_t anchorToken = result.tokens[static_cast<std::size_t>(start)];
    const at::Tensor draftLogits =
        drafter.draft(draftCache, newContext, anchorToken, start, analysis::MaskVariant::Reference, nullptr, verified);
    const std::vector<std::int64_t> drafts = toVector(argmaxLastDim(draftLogits));

    std::vector<std::int64_t> block{anchorToken};
    block.insert(block.end(), drafts.begin(), drafts.end());
    const ForwardOutput verify = target.forward(
        idsTensor(block), &targetCache, {.tapLayers = taps, .logits = true, .rewindable = true});
    // posterior[i]: the target's token for position start+i+1, given the block up to slot i.
    const std::vector<std::int64_t> posterior = toVector(argmaxLastDim(verify.logits[0]));

    int accepted = 0;
    while (accepted < verified - 1 &&
           drafts[static_cast<std::size_t>(accepted)] == posterior[static_cast<std::size_t>(accepted)])
      ++accepted;
    const std::int64_t bonus = posterior[static_cast<std::size_t>(accepted)];
    // The anchor and the accepted drafts are in the target cache now; the bonus is the next
    // anchor and has not been through the target.
    result.tokens.resize(static_cast<std::size_t>(start + 1));
    result.tokens.insert(result.tokens.end(), drafts.begin(), drafts.begin() + accepted);
    result.tokens.push_back(bonus);

    // The tokens this step commits after its anchor: all of them, or (dflash) those within the
    // budget and up to the first stop token.
    int produced = accepted + 1;
    if (dflash) {
      produced = static_cast<int>(std::min<std::int64_t>(produced, maxLength - start - 1));
      for (int i = 1; i <= produced; ++i)
        if (isStop(result.tokens[static_cast<std::size_t>(start + i)])) {
          produced = i;
          done = true;
          break;
        }
    } else {
      done = std::any_of(result.tokens.begin() + result.promptLength, result.tokens.end(), isStop);
    }

    session::StepRecord step;
    step.stepIndex = static_cast<std::int32_t>(result.steps.size());
    step.mode = session::EvaluationMode::Live;
    step.anchorPosition = start;
    step.anchorToken = static_cast<session::TokenId>(anchorToken);
    step.draftTokens = toTokenIds(drafts);
    step.targetTokens = toTokenIds(std::span(posterior).first(static_cast<std::size_t>(verified - 1)));
    step.acceptedCount = accepted;
    step.bonusToken = static_cast<session::TokenId>(bonus);
    step.countedLength = produced < accepted + 1 ? produced : 0;
    step.maskVariant = std::string(enumName(analysis::MaskVariant::Reference));
    if (options.topK > 0) fillTopK(draftLogits, options.topK, step.topKIds, step.topKProbs);
    result.steps.push_back(std::move(step));

    start += produced;
    targetCache.crop(start);
    newContext = concatenatedTaps(verify.taps).narrow(0, 0, produced);
  }
  // dflash's output: through the last anchor, within the budget.
  if (dflash) result.tokens.resize(static_cast<std::size_t>(std::min(start + 1, maxLength)));
  return result;
}

}  // namespace dfi::engine
