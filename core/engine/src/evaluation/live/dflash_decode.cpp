#include "evaluation/live/dflash_decode.h"

#include <algorithm>
#include <string>

#include <ATen/ops/cat.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>

#include "dfi/analysis/acceptance.h"
#include "dfi/base/error.h"
#include "evaluation/live/draft_distribution.h"
#include "evaluation/live/speculative_sampling.h"
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

// The tokens a block is drafted and verified with, and what the step commits.
struct BlockChoice {
  std::vector<std::int64_t> drafts;
  int accepted = 0;
  std::int64_t last = 0;       // the target's token after the accepted drafts
  std::vector<float> p, q, u;  // sampled only (StepRecord::targetProbs, draftProbs, acceptUniforms)
};

std::int64_t sampleToken(const at::Tensor& probs, SamplingStream& stream) {
  const double u[] = {stream.tokenUniform()};
  return drawTokens(probs, u).front();
}

// Greedy: drafts are the argmax, accepted while they equal the target's argmax (posterior).
int greedyAccepted(const std::vector<std::int64_t>& drafts, const std::vector<std::int64_t>& posterior) {
  int accepted = 0;
  while (accepted < static_cast<int>(drafts.size()) &&
         drafts[static_cast<std::size_t>(accepted)] == posterior[static_cast<std::size_t>(accepted)])
    ++accepted;
  return accepted;
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
  const bool sampled = !options.sampling.greedy();
  SamplingStream stream(options.sampling.seed);
  const int firstDraftRow = drafter.firstDraftRow();
  const std::vector<int>& taps = drafter.config().targetLayerIds;
  const std::optional<CandidateSelector> selector = drafter.selector();  // DFlash2
  const std::optional<DsparkHeads> dspark = drafter.dsparkHeads();

  SpeculativeResult result;
  result.promptLength = static_cast<std::int64_t>(prompt.size());
  result.tokens.assign(prompt.begin(), prompt.end());
  const std::int64_t maxLength = result.promptLength + options.maxNewTokens;

  ModelCache targetCache = target.newCache();
  const ForwardOutput prefill =
      target.forward(idsTensor(prompt), &targetCache, {.tapLayers = taps, .logits = true, .logitsToKeep = 1});
  const at::Tensor firstLogits = prefill.logits[0][-1];
  result.tokens.push_back(sampled ? sampleToken(samplingProbs(firstLogits, options.sampling), stream)
                                  : argmaxLastDim(firstLogits).item<std::int64_t>());
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
    // The drafts of this block: all of a block's, or (dflash) within the budget, at least one.
    const int drafts = dflash ? static_cast<int>(std::min<std::int64_t>(drafter.draftsPerBlock(), maxLength - start - 1))
                              : drafter.draftsPerBlock();
    const int blockLength = drafts + firstDraftRow;
    const std::int64_t anchorToken = result.tokens[static_cast<std::size_t>(start)];
    at::Tensor blockStates;
    at::Tensor draftLogits =
        drafter.draft(draftCache, newContext, anchorToken, start, analysis::MaskVariant::Reference, nullptr,
                      blockLength, selector || dspark ? &blockStates : nullptr);
    BlockChoice choice;
    at::Tensor draftProbs;  // sampled: [g, V], the distribution each draft was drawn from
    std::optional<SelectorPath> path;
    std::optional<DsparkPath> dsparkPath;
    if (selector) {
      // DFlash2: the selector's path; sampled, its draws over the candidates, spread over the
      // vocabulary (zero elsewhere) for the acceptance test and the residual, as the package's
      // draft_indices do.
      path = selector->select(blockStates.narrow(0, 1, blockLength - 1), draftLogits, anchorToken,
                              sampled ? &options.sampling : nullptr, &stream);
      choice.drafts = path->tokens;
      if (sampled)
        draftProbs = at::zeros(draftLogits.sizes(), draftLogits.options().dtype(at::kFloat))
                         .scatter(-1, path->candidates.to(draftLogits.device()), path->probs.to(draftLogits.device()));
    } else if (dspark) {
      // DSpark: slot by slot, each draft chosen from the logits its Markov bias gives after the
      // draft before it; sampled, q of each slot is that biased distribution.
      dsparkPath = dspark->run(blockStates, draftLogits, anchorToken,
                               sampled ? DsparkHeads::sampled(options.sampling, stream) : DsparkHeads::greedy());
      choice.drafts = dsparkPath->tokens;
      draftLogits = dsparkPath->logits;
      if (sampled) draftProbs = samplingProbs(draftLogits, options.sampling);
    } else if (sampled) {
      draftProbs = samplingProbs(draftLogits, options.sampling);
      std::vector<double> uniforms(static_cast<std::size_t>(drafts));
      for (double& u : uniforms) u = stream.tokenUniform();
      choice.drafts = drawTokens(draftProbs, uniforms);
    } else {
      choice.drafts = toVector(argmaxLastDim(draftLogits));
    }

    std::vector<std::int64_t> block{anchorToken};
    block.insert(block.end(), choice.drafts.begin(), choice.drafts.end());
    const ForwardOutput verify = target.forward(
        idsTensor(block), &targetCache, {.tapLayers = taps, .logits = true, .rewindable = true});
    // posterior[i]: the target's argmax for position start+i+1, given the block up to slot i.
    const std::vector<std::int64_t> posterior = toVector(argmaxLastDim(verify.logits[0]));
    if (sampled) {
      for (int i = 0; i < drafts; ++i) choice.u.push_back(stream.acceptUniform());
      RejectionOutcome outcome = rejectionSample(
          choice.drafts, samplingProbs(verify.logits[0], options.sampling), draftProbs, choice.u);
      choice.accepted = outcome.accepted;
      choice.last = sampleToken(outcome.next, stream);
      choice.p = std::move(outcome.p);
      choice.q = std::move(outcome.q);
    } else {
      choice.accepted = greedyAccepted(choice.drafts, posterior);
      choice.last = posterior[static_cast<std::size_t>(choice.accepted)];
    }
    const int accepted = choice.accepted;
    // The anchor and the accepted drafts are in the target cache now; the last token is the
    // next anchor and has not been through the target.
    result.tokens.resize(static_cast<std::size_t>(start + 1));
    result.tokens.insert(result.tokens.end(), choice.drafts.begin(), choice.drafts.begin() + accepted);
    result.tokens.push_back(choice.last);

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
    step.draftTokens = toTokenIds(choice.drafts);
    step.targetTokens = toTokenIds(std::span(posterior).first(static_cast<std::size_t>(drafts)));
    step.acceptedCount = accepted;
    step.bonusToken = static_cast<session::TokenId>(choice.last);
    step.countedLength = produced < accepted + 1 ? produced : 0;
    step.maskVariant = std::string(enumName(analysis::MaskVariant::Reference));
    step.targetProbs = std::move(choice.p);
    step.draftProbs = std::move(choice.q);
    step.acceptUniforms = std::move(choice.u);
    if (path) recordSelection(*path, step);
    if (dsparkPath) recordDsparkPath(*dsparkPath, step);
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
