#pragma once
// `serve`'s "inspect" request (protocol::InspectRequest: one block looked at closely, or
// re-drafted with another checkpoint or mask variant) as the engine's request.

#include "dfi/engine/inspect.h"
#include "dfi/protocol/messages.h"

namespace dfi::eval {

// Throws dfi::UsageError naming the field for a negative top_k.
engine::InspectRequest engineInspectRequest(const protocol::InspectRequest& request);

}  // namespace dfi::eval
