#pragma once
// The DFlash speculative-decoding loop of the reference (docs/dflash.md 3 and 8.2, z-lab's dflash
// 0.1.0 dflash_generate): target prefill -> per step: draft one block from the anchor, verify
// it with the target in one forward, accept a prefix of the drafts plus one token from the
// target, crop the target cache back to the committed length, and hand the committed tokens'
// target features to the drafter as new context. Greedy: the drafts are the drafter's argmax
// and accepted while they equal the target's. Sampled (temperature > 0): the drafts are drawn
// from the drafter's distribution and accepted by rejection sampling, the last token drawn
// from the residual or the target (evaluation/speculative_sampling.h). How the last steps are
// drafted and counted is StepCounting's choice.

#include <cstdint>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/engine/sampling.h"
#include "dfi/engine/step_counting.h"
#include "dfi/session/records.h"
#include "models/dflash_drafter.h"
#include "models/target_model.h"

namespace dfi::engine {

struct SpeculativeOptions {
  int maxNewTokens = 256;
  std::vector<std::int64_t> stopTokens;  // generation ends after a step that commits one
  int topK = 0;  // per-slot top-k of the draft distribution recorded with each step
  StepCounting counting = StepCounting::Dflash;
  // Its seed seeds this response's draws (an evaluation derives one per prompt and repeat with
  // responseSeed, so that drafters are paired).
  SamplingOptions sampling;
};

struct SpeculativeResult {
  std::int64_t promptLength = 0;
  // Prompt and every committed token. StepCounting::Dflash: dflash_generate's output_ids,
  // at most prompt + maxNewTokens tokens, ending at the first stop token. FullBlocks: the last
  // step's bonus included, even past a stop token or maxNewTokens.
  std::vector<std::int64_t> tokens;
  // One live record per step (run, prompt and step ids left for the session writer).
  std::vector<session::StepRecord> steps;

  // tau of this response: the mean of the steps' acceptLength() (dflash's acceptance_lengths).
  double meanAcceptLength() const;
};

SpeculativeResult speculativeDecode(const TargetModel& target, const DFlashDrafter& drafter,
                                    std::span<const std::int64_t> prompt,
                                    const SpeculativeOptions& options);

// The taps of one target forward ([1, T, Ht] each) side by side: [T, F*Ht], in tap order.
at::Tensor concatenatedTaps(const std::vector<at::Tensor>& taps);

}  // namespace dfi::engine
