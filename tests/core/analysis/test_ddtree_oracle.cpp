// DDTree against an independent Python reference written from the published algorithm
// (tests/oracle/gen_ddtree.py): on random per-slot logits (ties within and across slots
// included), budgets 1..64 and block sizes 2..16, the tree (tokens, parents, depths, ranks,
// path log-weights, bit for bit) and the greedy verification (accepted path, acceptance
// length, bonus token) must be identical.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dfi/analysis/ddtree.h"

using namespace dfi::analysis;

namespace {

nlohmann::json loadCases() {
  const char* dir = std::getenv("DFI_DDTREE_ORACLE");
  if (dir == nullptr) return {};
  std::ifstream in(std::filesystem::path(dir) / "cases.json");
  if (!in) return {};
  return nlohmann::json::parse(in)["cases"];
}

std::vector<SlotTopK> slotsOf(const nlohmann::json& c) {
  std::vector<SlotTopK> slots;
  const auto& ids = c["topk_ids"];
  const auto& lps = c["topk_log_probs"];
  for (std::size_t d = 0; d < ids.size(); ++d) {
    SlotTopK s;
    for (const auto& t : ids[d]) s.tokens.push_back(t.get<std::int32_t>());
    // The reference's float32 log-probabilities, written as exact doubles.
    for (const auto& lp : lps[d]) s.logProbs.push_back(static_cast<float>(lp.get<double>()));
    slots.push_back(std::move(s));
  }
  return slots;
}

template <typename T>
std::vector<T> vec(const nlohmann::json& j) {
  return j.get<std::vector<T>>();
}

}  // namespace

TEST(DDTreeOracle, TreesAndAcceptanceMatchTheReference) {
  const nlohmann::json cases = loadCases();
  ASSERT_TRUE(cases.is_array() && !cases.empty())
      << "no reference cases: run the ddtree_oracle fixture (tests/oracle/gen_ddtree.py) and set "
         "DFI_DDTREE_ORACLE";
  std::map<std::string, int> perKind;
  int treesWithTies = 0;
  for (const auto& c : cases) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const auto& expected = c["expected"];
    const std::vector<SlotTopK> slots = slotsOf(c);
    const DDTree tree = buildDDTree(slots, c["budget"].get<int>(), c["root_token"].get<std::int32_t>());

    ASSERT_EQ(tree.tokens, vec<std::int32_t>(expected["tokens"]));
    ASSERT_EQ(tree.parents, vec<std::int32_t>(expected["parents"]));
    ASSERT_EQ(tree.depths, vec<std::int32_t>(expected["depths"]));
    ASSERT_EQ(tree.ranks, vec<std::int32_t>(expected["ranks"]));
    const auto weights = vec<double>(expected["log_weights"]);
    ASSERT_EQ(tree.logWeights.size(), weights.size());
    for (std::size_t i = 0; i < weights.size(); ++i)
      ASSERT_EQ(tree.logWeights[i], weights[i]) << "node " << i;  // same float sums, same order

    const auto continuation = vec<std::int32_t>(c["continuation"]);
    const std::vector<std::int32_t> path = acceptedPath(tree, continuation);
    EXPECT_EQ(path, vec<std::int32_t>(expected["accepted_path"]));
    EXPECT_EQ(static_cast<int>(path.size()), expected["acceptance_length"].get<int>());
    EXPECT_EQ(continuation.at(path.size() - 1), expected["bonus_token"].get<std::int32_t>());

    ++perKind[c["kind"].get<std::string>()];
    for (std::size_t i = 2; i < tree.size(); ++i)
      if (tree.logWeights[i] == tree.logWeights[i - 1]) {
        ++treesWithTies;
        break;
      }
  }
  std::cout << cases.size() << " reference trees identical (" << treesWithTies
            << " with tied log-weights between consecutive pops); per kind:";
  for (const auto& [kind, n] : perKind) std::cout << " " << kind << " " << n;
  std::cout << "\n";
  EXPECT_GT(treesWithTies, 20) << "the cases should exercise the tie-break";
}
