// The tree view's layout: the DDTree rebuilt from a block's stored top-k (sizes, lanes, rows,
// the accepted path against the target's verifiable tokens) and a recorded tree.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "dfi/analysis/tree_layout.h"
#include "session_fixture.h"

using namespace dfi;
using namespace dfi::analysis;

namespace {

constexpr int kSlots = 7, kTopK = 4;

// Leaves are rows 0..n-1 once each; a parent is level with its first child.
void checkRows(const TreeLayout& layout) {
  std::vector<int> leafRows;
  std::vector<std::vector<int>> childRows(layout.nodes.size());
  for (std::size_t i = 1; i < layout.nodes.size(); ++i) {
    const TreeNode& n = layout.nodes[i];
    ASSERT_TRUE(n.parent >= 0 && static_cast<std::size_t>(n.parent) < i);
    EXPECT_EQ(n.depth, layout.nodes[static_cast<std::size_t>(n.parent)].depth + 1);
    childRows[static_cast<std::size_t>(n.parent)].push_back(n.row);
  }
  for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
    const std::vector<int>& rows = childRows[i];
    if (rows.empty()) {
      leafRows.push_back(layout.nodes[i].row);
      continue;
    }
    EXPECT_EQ(layout.nodes[i].row, *std::min_element(rows.begin(), rows.end()));
  }
  std::sort(leafRows.begin(), leafRows.end());
  ASSERT_EQ(static_cast<int>(leafRows.size()), layout.rowCount);
  for (int r = 0; r < layout.rowCount; ++r) EXPECT_EQ(leafRows[static_cast<std::size_t>(r)], r);
}

session::StepRecord blockWithMismatch() {
  // Prompt 1, step 2 of drafter-a: some drafts accepted, then a mismatch whose target token is
  // second in that slot's top-k (the fixture's design).
  session::StepRecord step = fixture::fixtureStep(0, 1, 2, 20, kSlots, kTopK);
  step.runId = 1;
  return step;
}

TEST(TreeLayout, RebuiltTreeHasItsBudgetAndLanes) {
  const session::StepRecord step = blockWithMismatch();
  const TreeLayout tree = TreeLayout::build(step, kTopK, 64);
  ASSERT_EQ(tree.nodes.size(), std::size_t{65});
  EXPECT_EQ(tree.nodes[0].token, step.anchorToken);
  EXPECT_TRUE(tree.depthCount >= 2 && tree.depthCount <= kSlots + 1);
  checkRows(tree);
  for (std::size_t i = 1; i < tree.nodes.size(); ++i) {
    const TreeNode& n = tree.nodes[i];
    // Probabilities multiply down the path; the node's own is its slot's top-k entry.
    const TreeNode& parent = tree.nodes[static_cast<std::size_t>(n.parent)];
    EXPECT_LT(std::abs(n.pathProbability - parent.pathProbability * n.probability), 1e-6);
    EXPECT_LT(std::abs(n.probability - step.topKProbs[static_cast<std::size_t>((n.depth - 1) * kTopK + n.rank)]), 1e-5);
  }
}

TEST(TreeLayout, TreeAcceptsTheTargetTokenTheChainMissed) {
  const session::StepRecord step = blockWithMismatch();
  ASSERT_LT(step.acceptedCount, kSlots);
  // The verifiable target tokens stop at the first mismatch (its target token, the bonus).
  EXPECT_EQ(verifiableTargetTokens(step).size(), static_cast<std::size_t>(step.acceptedCount) + 1);
  // 256 nodes reach the mismatch slot's second token (weight 0.55^6 x 0.25; 108 paths weigh more).
  const TreeLayout tree = TreeLayout::build(step, kTopK, 256);
  // The chain's accepted drafts plus the target's token at the mismatch, second in its slot.
  ASSERT_EQ(tree.acceptedPath.size(), static_cast<std::size_t>(step.acceptedCount) + 2);
  for (std::size_t d = 1; d < tree.acceptedPath.size(); ++d) {
    const TreeNode& n = tree.nodes[static_cast<std::size_t>(tree.acceptedPath[d])];
    EXPECT_TRUE(n.accepted);
    EXPECT_EQ(n.token, step.targetTokens[d - 1]);
  }
  int accepted = 0;
  for (const TreeNode& n : tree.nodes) accepted += n.accepted;
  EXPECT_EQ(static_cast<std::size_t>(accepted), tree.acceptedPath.size());

  // Budget 1: the draft's first token only.
  const TreeLayout one = TreeLayout::build(step, kTopK, 1);
  ASSERT_EQ(one.nodes.size(), std::size_t{2});
  EXPECT_EQ(one.nodes[1].token, step.draftTokens[0]);
  // Teacher-forced blocks can be checked at every depth.
  session::StepRecord forced = step;
  forced.mode = session::EvaluationMode::TeacherForced;
  EXPECT_EQ(verifiableTargetTokens(forced).size(), static_cast<std::size_t>(kSlots));
  // No stored top-k: the root alone.
  session::StepRecord bare = step;
  bare.topKIds.clear();
  bare.topKProbs.clear();
  EXPECT_EQ(TreeLayout::build(bare, kTopK, 64).nodes.size(), std::size_t{1});
}

TEST(TreeLayout, RecordedTreeKeepsItsPath) {
  const session::TreeRecord record{.stepId = 1, .nodeTokens = {5, 6, 7, 8},
                                   .nodeLogProbs = {0.0f, std::log(0.6f), std::log(0.3f), std::log(0.3f)},
                                   .parents = {-1, 0, 0, 1}, .acceptedPath = {0, 1, 3}};
  const TreeLayout tree = TreeLayout::fromRecord(record);
  checkRows(tree);
  EXPECT_EQ(tree.rowCount, 2);
  EXPECT_LT(std::abs(tree.nodes[3].probability - 0.5), 1e-5);  // 0.3 / 0.6
  EXPECT_TRUE(tree.nodes[3].accepted && tree.nodes[1].accepted && !tree.nodes[2].accepted);
  EXPECT_EQ(tree.nodes[3].rank, -1);
}

}  // namespace
