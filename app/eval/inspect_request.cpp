#include "inspect_request.h"

#include <string>

#include "dfi/base/error.h"
#include "dfi/protocol/message_fields.h"

namespace dfi::eval {

engine::InspectRequest engineInspectRequest(const protocol::InspectRequest& r) {
  engine::InspectRequest out;
  out.target = r.target;
  out.drafter = r.drafter;
  out.model.devices = {r.device};
  out.model.dtype = r.dtype;
  // 0 or less: the checkpoint's block size, as when the field is left out.
  if (r.blockSize && *r.blockSize > 0) out.blockSize = r.blockSize;
  out.ids = r.ids;
  out.anchor = r.anchor;
  out.variant = r.maskVariant;
  if (r.topK < 0)
    throw UsageError("inspect request: must be >= 0", {.item = std::string(fieldName(&protocol::InspectRequest::topK))});
  out.topK = r.topK;
  out.attention = r.attention;
  out.statistics = r.statistics;
  out.runId = r.runId;
  out.stepId = r.stepId;
  return out;
}

}  // namespace dfi::eval
