#include "inspect_request.h"

#include <string>

#include "dfi/base/error.h"

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
  const auto variant = analysis::parseMaskVariant(r.maskVariant);
  if (!variant)
    throw UsageError("inspect request: unknown mask variant '" + r.maskVariant + "'", {.item = "mask_variant"});
  out.variant = *variant;
  if (r.topK < 0) throw UsageError("inspect request: top_k must be >= 0", {.item = "top_k"});
  out.topK = r.topK;
  out.attention = r.attention;
  out.statistics = r.statistics;
  out.runId = r.runId;
  out.stepId = r.stepId;
  return out;
}

}  // namespace dfi::eval
