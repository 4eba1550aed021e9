#pragma once
// The DDTree of one block as the tree view draws it: either the tree the engine verified
// (TreeRecord) or one rebuilt from the block's stored per-slot top-k at any budget
// (buildDDTree). Each node sits in the lane of its depth; leaves are one row apart
// in depth-first order (children by probability) and a parent is level with its first child.
// Plain data: the GUI's tree canvas draws it, the tests check it directly.

#include <vector>

#include "dfi/session/records.h"

namespace dfi::analysis {

struct TreeNode {
  session::TokenId token = 0;
  int parent = -1;  // -1: the root (the anchor)
  int depth = 0;
  double probability = 1;      // the token's probability in its slot: p(node | its parent's path)
  double pathProbability = 1;  // the product along the path: the DDTree weight
  int rank = -1;               // rank in its slot's top-k (0 = the draft's token); -1: unknown
  bool accepted = false;       // on the accepted path
  int row = 0;                 // vertical place, in rows
};

struct TreeLayout {
  std::vector<TreeNode> nodes;
  std::vector<int> acceptedPath;  // node indices from the root, root included
  int depthCount = 0;             // deepest depth + 1
  int rowCount = 0;               // number of leaves

  // The tree the engine verified, with its recorded accepted path.
  static TreeLayout fromRecord(const session::TreeRecord& tree);
  // The DDTree of `budget` nodes (root excluded) built from the step's top-k (k = topK), its
  // accepted path checked against verifiableTargetTokens(step).
  static TreeLayout build(const session::StepRecord& step, int topK, int budget);
};

// The target tokens that a path through a tree can be checked against, by depth. Live and
// DDTree steps verified the draft's own chain, so the target's token is known only up to the
// first mismatch (the bonus); deeper ones were computed after a wrong token. Teacher-forced
// steps ran on the reference continuation, so every slot's target token holds.
std::vector<session::TokenId> verifiableTargetTokens(const session::StepRecord& step);

}  // namespace dfi::analysis
