#pragma once
// DDTree (Ringel & Romano, arXiv 2604.12989): from the drafter's per-slot marginals, the
// prefix-closed tree of `budget` nodes that maximises the expected number of accepted tokens
// under the factorised draft distribution, built best-first with a heap. Torch-free, so the
// GUI can rebuild a tree from stored top-k when the user moves the budget slider.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dfi/session/records.h"

namespace dfi::analysis {

// The top-k of one block slot (depth d = slot index + 1), most probable first; log-probs are
// float32 log-softmax over the whole vocabulary, as the reference computes them.
struct SlotTopK {
  std::vector<std::int32_t> tokens;
  std::vector<float> logProbs;
};

struct DDTree {
  // Node 0 is the root (the anchor / bonus token); nodes 1..n in the order the heap popped them.
  std::vector<std::int32_t> tokens;
  std::vector<std::int32_t> parents;    // parents[0] = -1
  std::vector<std::int32_t> depths;     // depths[0] = 0
  std::vector<std::int32_t> ranks;      // rank of the token in its slot's top-k (root: 0)
  std::vector<double> logWeights;       // sum of log-probs along the path (root: 0)

  std::size_t size() const { return tokens.size(); }
  // The child of `node` carrying `token`, or -1.
  std::int32_t child(std::int32_t node, std::int32_t token) const;
};

// `budget` = non-root nodes (DDTree-N). Only the stored top-k can be used, so a slot offers
// min(budget, its k) candidates; with k >= budget this is exactly the reference tree.
DDTree buildDDTree(std::span<const SlotTopK> slots, int budget, std::int32_t rootToken);

// The candidates for the children of node `parent` of the tree built so far (at depth
// tree.depths[parent] + 1), most probable first. Under DDTree's factorised distribution they are
// the same for every parent, its slot's top-k; a drafter whose slots depend on the tokens before
// them (DSpark's Markov head) gives each parent its own. The reference must stay valid while the
// tree is built.
using ChildCandidates = std::function<const SlotTopK&(const DDTree& tree, std::int32_t parent)>;
// The same best-first construction, `depths` deep, each node's children from `children`. Not the
// published algorithm where the candidates differ between parents: its generalisation, and the
// published tree exactly where they do not.
DDTree buildDDTree(const ChildCandidates& children, int depths, int budget, std::int32_t rootToken);

// Greedy verification: from the root, follow the child that carries the target's next greedy
// token while one exists. Returns the node indices of the accepted path, root included; its
// length is the acceptance length (the bonus token is the target's token after its end).
std::vector<std::int32_t> acceptedPath(const DDTree& tree, std::span<const std::int32_t> targetGreedy);

// The DDTree-N of a teacher-forced step: built from its per-slot top-k (`k` entries a slot,
// probabilities stored, log-probabilities used) under its anchor. Throws dfi::Error when the
// step carries another number of top-k entries. The engine's DDTree mode and the what-ifs
// (budget_what_if.h) both build their trees here.
DDTree stepTree(const session::StepRecord& step, int k, int budget);

}  // namespace dfi::analysis
