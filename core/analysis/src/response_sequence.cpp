#include "dfi/analysis/response_sequence.h"

#include <algorithm>

namespace dfi::analysis {

ResponseSequence ResponseSequence::build(const std::vector<session::TokenId>& promptTokens,
                                         const std::vector<session::StepRecord>& steps) {
  ResponseSequence seq;
  seq.promptLength = static_cast<std::int64_t>(promptTokens.size());
  for (session::TokenId id : promptTokens) seq.tokens.push_back({id, TokenOrigin::Prompt, -1, 0});
  for (const session::StepRecord& step : steps) {
    const auto size = static_cast<std::int64_t>(seq.tokens.size());
    // The anchor is either the token just committed (the previous bonus) or, for the first
    // step, the sample from the prefill, which sits right after the prompt.
    if (step.anchorPosition == size) {
      seq.tokens.push_back({step.anchorToken, TokenOrigin::FirstSample, step.stepIndex, 0});
    } else if (step.anchorPosition != size - 1) {
      break;
    }
    const int accepted = std::min<int>(step.acceptedCount, static_cast<int>(step.draftTokens.size()));
    for (int i = 0; i < accepted; ++i)
      seq.tokens.push_back({step.draftTokens[static_cast<std::size_t>(i)], TokenOrigin::AcceptedDraft,
                            step.stepIndex, i + 1});
    seq.tokens.push_back({step.bonusToken, TokenOrigin::Bonus, step.stepIndex, accepted + 1});
  }
  return seq;
}

}  // namespace dfi::analysis
