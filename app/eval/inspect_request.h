#pragma once
// `serve`'s "inspect" request (one block looked at closely, or re-drafted with another
// checkpoint or mask variant) read from its JSON header:
//   {"type":"inspect", "request_id":7, "target":DIR, "drafter":DIR, "ids":[...], "anchor":12,
//    "mask_variant":"reference", "top_k":8, "attention":true, "statistics":true,
//    "device":"cpu", "dtype":"fp32", "block_size":16, "run_id":3, "step_id":41}
// target, drafter, ids and anchor are required; the rest keep the defaults of InspectRequest.

#include <nlohmann/json_fwd.hpp>

#include "dfi/engine/inspect.h"

namespace dfi::eval {

// Throws dfi::UsageError naming the field for a missing or mistyped one or an unknown variant.
engine::InspectRequest inspectRequestFromJson(const nlohmann::json& request);

}  // namespace dfi::eval
