#pragma once
// Which positions of a live loop's continuation get a teacher-forced block: the anchors the
// live loop visited (the parity check), every k-th generated position, or N of them drawn with
// a seed (settings::AnchorSelection).

#include <cstdint>
#include <vector>

#include "dfi/settings/settings.h"
#include "evaluation/live/dflash_decode.h"

namespace dfi::engine {

// Sorted positions, each before the last token (whose successor is not in the sequence).
std::vector<std::int64_t> chooseAnchors(const settings::AnchorSelection& selection, const SpeculativeResult& live);

}  // namespace dfi::engine
