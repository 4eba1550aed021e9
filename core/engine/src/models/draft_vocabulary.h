#pragma once
// A reduced draft vocabulary (vLLM speculators' draft_vocab_size with d2t / t2d): the drafter's
// own LM head scores Vd draft ids, draft id i standing for target id i + d2t[i]. The drafter
// hands every consumer (argmax, sampling, DDTree's top-k, calibration) logits over the target's
// vocabulary, the draft ids' scores at their target ids and -inf elsewhere, so every mode works
// in target ids and a token the draft vocabulary cannot express has probability zero, as it has
// in vLLM (which maps draft ids through d2t before verification).

#include <cstdint>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dfi/modelspec/drafter_config.h"
#include "dfi/session/records.h"

namespace dfi::engine {

class WeightLoader;

struct DraftVocabulary {
  at::Tensor lmHead;     // [Vd, H] in the compute dtype
  at::Tensor targetIds;  // [Vd] int64: the target id of each draft id, strictly increasing
  std::vector<std::int64_t> hostTargetIds;  // the same on the host, for the records

  // The draft id of each target id (StepRecord::draftVocabIds): -1 for -1 (no draft) and for a
  // target id the draft vocabulary cannot express.
  std::vector<session::TokenId> draftIdsOf(std::span<const session::TokenId> targetIds) const;
};

// Reads lm_head.weight, d2t and t2d and checks the mapping: every target id inside the target
// vocabulary and listed once, t2d marking exactly those ids. dfi::ValidationError names the
// file, the tensor and the offending values.
DraftVocabulary loadDraftVocabulary(const WeightLoader& loader, const modelspec::DrafterConfig& config,
                                    at::Device device);

// [..., Vd] draft-id logits -> [..., Vt] target-id logits written into `out` (-inf where the draft
// vocabulary has no id).
void scatterToTargetVocabulary(const at::Tensor& draftLogits, const DraftVocabulary& vocabulary, at::Tensor out);

}  // namespace dfi::engine
