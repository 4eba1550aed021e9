#include "evaluation/ddtree/ddtree_steps.h"

#include <vector>

#include "dfi/analysis/ddtree.h"
#include "evaluation/teacher_forced/dflash_teacher_forced.h"  // kUnknownToken

namespace dfi::engine {

// The target's greedy tokens after the anchor decide the accepted path, exactly as tree
// verification with a greedy target would.
std::pair<session::StepRecord, session::TreeRecord> ddtreeStep(const session::StepRecord& tf, int k, int budget) {
  return ddtreeStep(tf, analysis::stepTree(tf, k, budget));
}

std::pair<session::StepRecord, session::TreeRecord> ddtreeStep(const session::StepRecord& tf,
                                                               const analysis::DDTree& tree) {
  const auto path = analysis::acceptedPath(tree, tf.targetTokens);
  session::StepRecord step = tf;
  step.mode = session::EvaluationMode::DDTree;
  step.slotOverlap.clear();  // the chain's chance under sampling, not the tree's: the teacher-forced step keeps it
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
