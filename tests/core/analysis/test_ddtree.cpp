#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "dfi/analysis/ddtree.h"

using namespace dfi::analysis;

namespace {

SlotTopK slot(std::vector<std::int32_t> tokens, std::vector<double> probs) {
  SlotTopK s;
  s.tokens = std::move(tokens);
  for (double p : probs) s.logProbs.push_back(static_cast<float>(std::log(p)));
  return s;
}

double expectedAccepted(const DDTree& tree) {
  double sum = 0;
  for (std::size_t i = 1; i < tree.size(); ++i) sum += std::exp(tree.logWeights[i]);
  return sum;
}

// Brute force over every prefix-closed tree of `budget` nodes drawn from the full candidate
// tree (each node has the slot's k children): the published claim is that the heap finds the
// maximum of the sum of path probabilities.
double bestPossible(const std::vector<SlotTopK>& slots, int budget) {
  struct Node { double weight; int depth; };
  double best = 0;
  // frontier: nodes that may be added (their parent is in the tree)
  std::function<void(std::vector<Node>, int, double)> search = [&](std::vector<Node> frontier, int left,
                                                                   double total) {
    best = std::max(best, total);
    if (left == 0) return;
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      // Add frontier[i]; to count each set once, later choices may only use frontier[i+1..].
      std::vector<Node> next(frontier.begin() + static_cast<long>(i) + 1, frontier.end());
      const Node n = frontier[i];
      if (n.depth < static_cast<int>(slots.size()))
        for (float lp : slots[n.depth].logProbs) next.push_back({n.weight * std::exp(double(lp)), n.depth + 1});
      search(next, left - 1, total + n.weight);
    }
  };
  std::vector<Node> roots;
  for (float lp : slots[0].logProbs) roots.push_back({std::exp(double(lp)), 1});
  search(roots, budget, 0);
  return best;
}

}  // namespace

TEST(DDTree, HandWorkedExample) {
  // depth 1: A .5, B .25 ; depth 2: C .5, D .125. Powers of two make AC (.25) and B (.25)
  // tie exactly in float; the reference then pops the smaller rank tuple, (0,0) < (1,).
  const std::vector<SlotTopK> slots{slot({10, 11}, {.5, .25}), slot({20, 21}, {.5, .125})};
  const DDTree tree = buildDDTree(slots, 4, 7);
  // Pop order: A (.5), AC (.25), B (.25), BC (.125); AD (.0625) misses the budget.
  EXPECT_EQ(tree.tokens, (std::vector<std::int32_t>{7, 10, 20, 11, 20}));
  EXPECT_EQ(tree.parents, (std::vector<std::int32_t>{-1, 0, 1, 0, 3}));
  EXPECT_EQ(tree.depths, (std::vector<std::int32_t>{0, 1, 2, 1, 2}));
  EXPECT_EQ(acceptedPath(tree, std::vector<std::int32_t>{11, 20, 99}), (std::vector<std::int32_t>{0, 3, 4}));
  EXPECT_EQ(acceptedPath(tree, std::vector<std::int32_t>{10, 21}), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(acceptedPath(tree, std::vector<std::int32_t>{12}), (std::vector<std::int32_t>{0}));
}

TEST(DDTree, MaximisesExpectedAcceptanceLikeTheBruteForce) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<SlotTopK> slots;
    for (int d = 0; d < 3; ++d) {
      std::uniform_real_distribution<double> u(0.01, 1.0);
      double a = u(rng), b = u(rng), c = u(rng), z = a + b + c + u(rng);
      std::vector<double> p{a / z, b / z, c / z};
      std::sort(p.rbegin(), p.rend());
      slots.push_back(slot({d * 10, d * 10 + 1, d * 10 + 2}, p));
    }
    for (int budget = 1; budget <= 5; ++budget) {
      const DDTree tree = buildDDTree(slots, budget, 0);
      ASSERT_EQ(tree.size(), static_cast<std::size_t>(budget) + 1);
      EXPECT_NEAR(expectedAccepted(tree), bestPossible(slots, budget), 1e-6) << trial << " " << budget;
    }
  }
}

TEST(DDTree, IsPrefixClosedAndRespectsTheBudget) {
  std::mt19937 rng(7);
  std::vector<SlotTopK> slots;
  for (int d = 0; d < 15; ++d) {
    std::vector<double> p;
    double z = 0;
    for (int r = 0; r < 8; ++r) z += p.emplace_back(std::exp(-r * 0.7 + std::normal_distribution<>(0, .1)(rng)));
    for (double& x : p) x /= z * 1.2;
    std::sort(p.rbegin(), p.rend());
    std::vector<std::int32_t> tokens;
    for (int r = 0; r < 8; ++r) tokens.push_back(d * 100 + r);
    slots.push_back(slot(tokens, p));
  }
  const DDTree tree = buildDDTree(slots, 64, 1);
  ASSERT_EQ(tree.size(), 65u);
  for (std::size_t i = 1; i < tree.size(); ++i) {
    ASSERT_LT(tree.parents[i], static_cast<std::int32_t>(i));  // parent popped first
    EXPECT_EQ(tree.depths[i], tree.depths[tree.parents[i]] + 1);
    EXPECT_LE(tree.logWeights[i], tree.logWeights[tree.parents[i]]);
  }
  // Budget 0 is the bare root; a budget beyond the stored top-k stays within it.
  EXPECT_EQ(buildDDTree(slots, 0, 1).size(), 1u);
  const std::vector<SlotTopK> one{slot({5, 6}, {.7, .2})};
  EXPECT_EQ(buildDDTree(one, 8, 1).size(), 3u);
}
