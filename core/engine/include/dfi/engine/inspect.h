#pragma once
// One block looked at closely, for the GUI's attention, mask and statistics views and for
// re-drafting a recorded block with another checkpoint or mask variant (`serve`'s "inspect"
// request). The target runs once over the sequence; the drafter drafts the block at `anchor`
// through the inference path with every probe on. Torch-free API.
//
// What comes back, as session records (so the GUI stores them like any other):
//  - step: the re-drafted block (mode teacher-forced: draft tokens, the target's greedy tokens
//    where the sequence reaches, accepted count, per-slot top-k), keyed by the request's ids;
//  - tensors "drafter.layers.<l>.attn.probs" (F32 [heads, B, context + B], layout
//    "head,query,key": columns are context positions 0.. then the block slots) when asked;
//    "drafter.mask.full" / "drafter.mask.sliding" (U8 [B, context + B], 1 = may attend) for
//    the layer kinds the drafter has;
//  - statistics (dfi/session/hidden_statistics.h) of the target taps, fc and hidden_norm over
//    the block's context positions and of every drafter layer over the block, when asked.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "dfi/analysis/attention_mask.h"
#include "dfi/engine/model_options.h"
#include "dfi/engine/model_registry.h"
#include "dfi/session/records.h"
#include "dfi/settings/settings.h"

namespace dfi::engine {

// The "inspect" request's settings (dfi/settings/settings.h), taken as they come.
using InspectRequest = settings::InspectSettings;

struct InspectResult {
  session::StepRecord step;
  std::vector<session::TensorRecord> tensors;
  std::vector<session::StatisticRecord> statistics;
};

// Throws dfi::Error subclasses: unloadable or mismatched models, ids outside the vocabulary,
// an anchor outside the sequence (naming the value and the valid range).
InspectResult inspectBlock(ModelRegistry& models, const InspectRequest& request);

}  // namespace dfi::engine
