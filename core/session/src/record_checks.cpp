#include "record_checks.h"

#include "dfi/session/record_fields.h"
#include "tile_codec.h"

namespace dfi::session::detail {

std::optional<std::string> stepProblem(const StepRecord& step, std::int32_t topK) {
  const std::size_t slots = step.draftTokens.size();
  if (step.targetTokens.size() != slots)
    return "step has " + std::to_string(slots) + " draft tokens but " + std::to_string(step.targetTokens.size()) +
           " target tokens";
  if (step.acceptedCount < 0 || static_cast<std::size_t>(step.acceptedCount) > slots)
    return "accepted count " + std::to_string(step.acceptedCount) + " is outside 0.." + std::to_string(slots);
  if (step.topKIds.size() != step.topKProbs.size())
    return "top-k table has " + std::to_string(step.topKIds.size()) + " ids but " +
           std::to_string(step.topKProbs.size()) + " probabilities";
  if (topK >= 0 && step.topKIds.size() != slots * static_cast<std::size_t>(topK) && !step.topKIds.empty())
    return "top-k table has " + std::to_string(step.topKIds.size()) + " entries, expected " +
           std::to_string(slots) + " slots x k=" + std::to_string(topK);
  if (!step.garbleFlags.empty() && step.garbleFlags.size() != slots)
    return "garble flags cover " + std::to_string(step.garbleFlags.size()) + " slots, the block has " +
           std::to_string(slots);
  if (!isKnownEnum(step.mode))
    return "unknown step mode " + std::to_string(static_cast<std::int32_t>(step.mode));
  return std::nullopt;
}

std::optional<std::string> treeProblem(const TreeRecord& tree) {
  const std::size_t nodes = tree.nodeTokens.size();
  if (tree.nodeLogProbs.size() != nodes || tree.parents.size() != nodes)
    return "tree has " + std::to_string(nodes) + " tokens, " + std::to_string(tree.nodeLogProbs.size()) +
           " log-probabilities and " + std::to_string(tree.parents.size()) + " parents";
  for (std::size_t i = 0; i < nodes; ++i) {
    const std::int32_t parent = tree.parents[i];
    // Nodes are numbered in creation order, so a parent always precedes its child.
    if (i == 0 ? parent != -1 : (parent < 0 || static_cast<std::size_t>(parent) >= i))
      return "tree node " + std::to_string(i) + " has invalid parent " + std::to_string(parent);
  }
  for (std::size_t i = 0; i < tree.acceptedPath.size(); ++i) {
    const std::int32_t node = tree.acceptedPath[i];
    const bool linked = node >= 0 && static_cast<std::size_t>(node) < nodes &&
                        (i == 0 ? node == 0 : tree.parents[node] == tree.acceptedPath[i - 1]);
    if (!linked) return "accepted path entry " + std::to_string(i) + " is not a child of the previous node";
  }
  return std::nullopt;
}

std::optional<std::string> tileLayoutProblem(const TensorInfo& info, bool chooseTileSize, TileLayout& layout) {
  if (!isKnownEnum(info.dtype))
    return "unknown tensor dtype " + std::to_string(static_cast<std::int32_t>(info.dtype));
  const std::uint64_t element = tensorDTypeSize(info.dtype);
  std::uint64_t total = element;
  for (const std::int64_t dim : info.shape) {
    if (dim < 0) return "tensor '" + info.name + "' has a negative dimension";
    if (dim != 0 && total > kMaxTensorBytes / static_cast<std::uint64_t>(dim))
      return "tensor '" + info.name + "' is larger than 1 TiB";
    total *= static_cast<std::uint64_t>(dim);
  }
  layout.totalBytes = total;
  layout.tileBytes = chooseTileSize ? kTileTargetBytes / element * element : static_cast<std::uint64_t>(info.tileBytes);
  if (layout.tileBytes == 0 || layout.tileBytes % element != 0 || layout.tileBytes > kMaxTileBytes)
    return "tensor '" + info.name + "' has invalid tile size " + std::to_string(layout.tileBytes);
  layout.tileCount = (total + layout.tileBytes - 1) / layout.tileBytes;
  return std::nullopt;
}

}  // namespace dfi::session::detail
