#include "dfi/analysis/ddtree.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <string>

#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {

// A candidate node on the frontier. `path` holds the ranks from depth 1 down to this node:
// the reference breaks weight ties by comparing these rank tuples lexicographically.
struct Candidate {
  double logWeight;
  std::vector<std::int32_t> path;
  std::int32_t parent;
  std::int32_t depth;
  std::int32_t rank;
};

struct PopsFirst {
  // std::priority_queue pops the largest; "larger" here means popped earlier.
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.logWeight != b.logWeight) return a.logWeight < b.logWeight;
    if (a.path != b.path) return a.path > b.path;
    if (a.parent != b.parent) return a.parent > b.parent;
    return a.depth > b.depth;
  }
};

// Per-slot top-k of a step as DDTree input (log-probabilities, most probable first).
std::vector<SlotTopK> slotTopK(const session::StepRecord& step, int k) {
  std::vector<SlotTopK> slots(step.draftTokens.size());
  if (step.topKIds.size() != slots.size() * static_cast<std::size_t>(k) || step.topKProbs.size() != step.topKIds.size())
    throw Error("internal: a teacher-forced step carries " + std::to_string(step.topKIds.size()) +
                " top-k entries, DDTree needs " + std::to_string(slots.size()) + " slots x " + std::to_string(k));
  for (std::size_t s = 0; s < slots.size(); ++s)
    for (int r = 0; r < k; ++r) {
      const std::size_t i = s * static_cast<std::size_t>(k) + static_cast<std::size_t>(r);
      slots[s].tokens.push_back(step.topKIds[i]);
      slots[s].logProbs.push_back(std::log(step.topKProbs[i]));
    }
  return slots;
}

}  // namespace

std::int32_t DDTree::child(std::int32_t node, std::int32_t token) const {
  for (std::size_t i = static_cast<std::size_t>(node) + 1; i < tokens.size(); ++i)
    if (parents[i] == node && tokens[i] == token) return static_cast<std::int32_t>(i);
  return -1;
}

DDTree buildDDTree(std::span<const SlotTopK> slots, int budget, std::int32_t rootToken) {
  return buildDDTree([&](const DDTree& tree, std::int32_t parent) -> const SlotTopK& {
    return slots[static_cast<std::size_t>(tree.depths[static_cast<std::size_t>(parent)])];
  }, static_cast<int>(slots.size()), budget, rootToken);
}

DDTree buildDDTree(const ChildCandidates& children, int depths, int budget, std::int32_t rootToken) {
  DDTree tree;
  tree.tokens = {rootToken};
  tree.parents = {-1};
  tree.depths = {0};
  tree.ranks = {0};
  tree.logWeights = {0.0};
  if (budget <= 0 || depths <= 0 || children(tree, 0).tokens.empty()) return tree;

  // A candidate's rank among its parent's children, and its log-probability there.
  auto candidatesOf = [&](std::int32_t parent) -> const SlotTopK& { return children(tree, parent); };
  auto candidatesAt = [&](std::int32_t parent) {
    return std::min<std::size_t>(static_cast<std::size_t>(budget), candidatesOf(parent).tokens.size());
  };
  auto logProb = [&](std::int32_t parent, std::int32_t rank) {
    return static_cast<double>(candidatesOf(parent).logProbs[static_cast<std::size_t>(rank)]);
  };

  std::priority_queue<Candidate, std::vector<Candidate>, PopsFirst> frontier;
  frontier.push({logProb(0, 0), {0}, 0, 1, 0});
  while (!frontier.empty() && static_cast<int>(tree.size()) - 1 < budget) {
    Candidate c = frontier.top();
    frontier.pop();
    const auto index = static_cast<std::int32_t>(tree.size());
    tree.tokens.push_back(candidatesOf(c.parent).tokens[static_cast<std::size_t>(c.rank)]);
    tree.parents.push_back(c.parent);
    tree.depths.push_back(c.depth);
    tree.ranks.push_back(c.rank);
    tree.logWeights.push_back(c.logWeight);

    if (static_cast<std::size_t>(c.rank) + 1 < candidatesAt(c.parent)) {
      Candidate sibling = c;
      sibling.rank = c.rank + 1;
      sibling.path.back() = sibling.rank;
      sibling.logWeight = c.logWeight - logProb(c.parent, c.rank) + logProb(c.parent, sibling.rank);
      frontier.push(std::move(sibling));
    }
    if (c.depth < depths && !candidatesOf(index).tokens.empty()) {
      Candidate firstChild{c.logWeight + logProb(index, 0), c.path, index, c.depth + 1, 0};
      firstChild.path.push_back(0);
      frontier.push(std::move(firstChild));
    }
  }
  return tree;
}

std::vector<std::int32_t> acceptedPath(const DDTree& tree, std::span<const std::int32_t> targetGreedy) {
  std::vector<std::int32_t> path{0};
  for (std::int32_t token : targetGreedy) {
    const std::int32_t next = tree.child(path.back(), token);
    if (next < 0) break;
    path.push_back(next);
  }
  return path;
}

DDTree stepTree(const session::StepRecord& step, int k, int budget) {
  return buildDDTree(slotTopK(step, k), budget, step.anchorToken);
}

}  // namespace dfi::analysis
