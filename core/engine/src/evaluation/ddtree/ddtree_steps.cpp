#include "evaluation/ddtree/ddtree_steps.h"

#include <cmath>
#include <string>
#include <vector>

#include "dfi/analysis/ddtree.h"
#include "dfi/base/error.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"  // kUnknownToken

namespace dfi::engine {
namespace {

// Per-slot top-k of a step as DDTree input (log-probabilities, most probable first).
std::vector<analysis::SlotTopK> slotTopK(const session::StepRecord& step, int k) {
  std::vector<analysis::SlotTopK> slots(step.draftTokens.size());
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

// The target's greedy tokens after the anchor decide the accepted path, exactly as tree
// verification with a greedy target would.
std::pair<session::StepRecord, session::TreeRecord> ddtreeStep(const session::StepRecord& tf, int k, int budget) {
  const analysis::DDTree tree = analysis::buildDDTree(slotTopK(tf, k), budget, tf.anchorToken);
  const auto path = analysis::acceptedPath(tree, tf.targetTokens);
  session::StepRecord step = tf;
  step.mode = session::EvaluationMode::DDTree;
  step.acceptedCount = static_cast<std::int32_t>(path.size()) - 1;
  // The bonus is the target's token after the path. A path through non-top-1 candidates can
  // reach the last slot where the chain did not: the target's token after the block is not in
  // the record then (targetTokens stop at slot B-2), so the bonus is unknown.
  const auto accepted = static_cast<std::size_t>(step.acceptedCount);
  if (step.acceptedCount != tf.acceptedCount)
    step.bonusToken = accepted < tf.targetTokens.size() ? tf.targetTokens[accepted] : kUnknownToken;
  session::TreeRecord record;
  record.nodeTokens = tree.tokens;
  for (double w : tree.logWeights) record.nodeLogProbs.push_back(static_cast<float>(w));
  record.parents = tree.parents;
  record.acceptedPath = path;
  return {step, record};
}

}  // namespace dfi::engine
