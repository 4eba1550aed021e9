#pragma once
// The token sequence of one response rebuilt from its records: the prompt, then per step the
// anchor, the accepted drafts and the bonus token (which is the next step's anchor). Each
// token remembers where it came from, for the acceptance colouring and for hover texts.

#include <cstdint>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::analysis {

enum class TokenOrigin {
  Prompt,
  FirstSample,    // sampled from the prefill logits: the first step's anchor
  AcceptedDraft,  // a draft slot the target agreed with
  Bonus,          // the target's token after the accepted prefix (a correction or the +1)
};

struct SequenceToken {
  session::TokenId id = 0;
  TokenOrigin origin = TokenOrigin::Prompt;
  std::int32_t stepIndex = -1;  // the step that committed it (-1: prompt)
  int slot = 0;                 // AcceptedDraft: 1-based draft slot
};

struct ResponseSequence {
  std::int64_t promptLength = 0;
  std::vector<SequenceToken> tokens;  // indexed by sequence position

  // Steps must be in step order. Positions a step record claims beyond the rebuilt
  // sequence (a gap in a partial file) end the rebuild there.
  static ResponseSequence build(const std::vector<session::TokenId>& promptTokens,
                                const std::vector<session::StepRecord>& steps);
};

}  // namespace dfi::analysis
