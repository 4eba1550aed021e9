#include "dfi/analysis/tree_layout.h"

#include <algorithm>
#include <cmath>

#include "dfi/analysis/ddtree.h"

namespace dfi::analysis {
namespace {

// Leaves one row apart in depth-first order, the likelier child first; a parent level with its
// first child, so the most likely chain (the draft's own) runs along the top row and the
// alternatives branch off below it. Parents precede children in both tree formats, so depths
// come in order.
void placeRows(TreeLayout& layout) {
  std::vector<std::vector<int>> children(layout.nodes.size());
  for (std::size_t i = 1; i < layout.nodes.size(); ++i) {
    TreeNode& node = layout.nodes[i];
    node.depth = layout.nodes[static_cast<std::size_t>(node.parent)].depth + 1;
    children[static_cast<std::size_t>(node.parent)].push_back(static_cast<int>(i));
  }
  for (std::vector<int>& c : children)
    std::stable_sort(c.begin(), c.end(), [&](int a, int b) {
      return layout.nodes[static_cast<std::size_t>(a)].pathProbability >
             layout.nodes[static_cast<std::size_t>(b)].pathProbability;
    });
  int nextLeaf = 0;
  auto place = [&](auto& self, int node) -> void {
    const std::vector<int>& c = children[static_cast<std::size_t>(node)];
    const double row = nextLeaf;
    if (c.empty()) ++nextLeaf;
    for (int child : c) self(self, child);
    layout.nodes[static_cast<std::size_t>(node)].row = row;
  };
  if (!layout.nodes.empty()) place(place, 0);
  layout.rowCount = nextLeaf;
  layout.depthCount = 0;
  for (const TreeNode& n : layout.nodes) layout.depthCount = std::max(layout.depthCount, n.depth + 1);
  for (int node : layout.acceptedPath) layout.nodes[static_cast<std::size_t>(node)].accepted = true;
}

}  // namespace

std::vector<session::TokenId> verifiableTargetTokens(const session::StepRecord& step) {
  if (step.mode == session::EvaluationMode::TeacherForced) return step.targetTokens;
  const auto known = std::min(step.targetTokens.size(), static_cast<std::size_t>(step.acceptedCount) + 1);
  return {step.targetTokens.begin(), step.targetTokens.begin() + static_cast<std::ptrdiff_t>(known)};
}

TreeLayout TreeLayout::fromRecord(const session::TreeRecord& tree) {
  TreeLayout layout;
  layout.nodes.resize(tree.nodeTokens.size());
  for (std::size_t i = 0; i < tree.nodeTokens.size(); ++i) {
    TreeNode& node = layout.nodes[i];
    node.token = tree.nodeTokens[i];
    node.parent = tree.parents[i];
    const double logWeight = tree.nodeLogProbs[i];
    const double parentLogWeight = node.parent < 0 ? 0.0 : tree.nodeLogProbs[static_cast<std::size_t>(node.parent)];
    node.pathProbability = std::exp(logWeight);
    node.probability = std::exp(logWeight - parentLogWeight);
  }
  layout.acceptedPath = tree.acceptedPath;
  placeRows(layout);
  return layout;
}

TreeLayout TreeLayout::build(const session::StepRecord& step, int topK, int budget) {
  std::vector<SlotTopK> slots;
  const std::size_t k = topK > 0 ? static_cast<std::size_t>(topK) : 0;
  if (k > 0 && step.topKIds.size() == step.draftTokens.size() * k) {
    slots.resize(step.draftTokens.size());
    for (std::size_t s = 0; s < slots.size(); ++s)
      for (std::size_t j = 0; j < k; ++j) {
        slots[s].tokens.push_back(step.topKIds[s * k + j]);
        slots[s].logProbs.push_back(std::log(std::max(step.topKProbs[s * k + j], 1e-30f)));
      }
  }
  const DDTree tree = buildDDTree(slots, budget, step.anchorToken);
  TreeLayout layout;
  layout.nodes.resize(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i) {
    TreeNode& node = layout.nodes[i];
    node.token = tree.tokens[i];
    node.parent = tree.parents[i];
    node.rank = i == 0 ? -1 : tree.ranks[i];
    node.pathProbability = std::exp(tree.logWeights[i]);
    node.probability =
        node.parent < 0 ? 1.0 : std::exp(tree.logWeights[i] - tree.logWeights[static_cast<std::size_t>(node.parent)]);
  }
  layout.acceptedPath = analysis::acceptedPath(tree, verifiableTargetTokens(step));
  placeRows(layout);
  return layout;
}

}  // namespace dfi::analysis
