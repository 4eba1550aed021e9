#include "inspect_request.h"

#include <string>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"

namespace dfi::eval {

engine::InspectRequest inspectRequestFromJson(const nlohmann::json& r) {
  auto get = [&](const char* key, auto& field, bool required) {
    if (!r.contains(key)) {
      if (required) throw UsageError(std::string("inspect request: field '") + key + "' is missing", {.item = key});
      return;
    }
    try {
      r.at(key).get_to(field);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(std::string("inspect request: field '") + key + "': " + e.what(), {.item = key});
    }
  };
  engine::InspectRequest out;
  std::string target, drafter, variant = "reference", device = "cpu";
  get("target", target, true);
  get("drafter", drafter, true);
  get("ids", out.ids, true);
  get("anchor", out.anchor, true);
  get("mask_variant", variant, false);
  get("top_k", out.topK, false);
  get("attention", out.attention, false);
  get("statistics", out.statistics, false);
  get("device", device, false);
  get("dtype", out.model.dtype, false);
  get("run_id", out.runId, false);
  get("step_id", out.stepId, false);
  int blockSize = 0;
  get("block_size", blockSize, false);
  if (blockSize > 0) out.blockSize = blockSize;
  out.target = target;
  out.drafter = drafter;
  out.model.devices = {device};
  const auto parsed = analysis::parseMaskVariant(variant);
  if (!parsed) throw UsageError("inspect request: unknown mask variant '" + variant + "'", {.item = "mask_variant"});
  out.variant = *parsed;
  if (out.topK < 0) throw UsageError("inspect request: top_k must be >= 0", {.item = "top_k"});
  return out;
}

}  // namespace dfi::eval
