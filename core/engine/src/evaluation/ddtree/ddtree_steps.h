#pragma once
// DDTree-N runs from a teacher-forced step: the tree built from the step's per-slot top-k (or,
// for a DSpark drafter, through its heads) and the path a greedy target would accept through it.

#include <utility>

#include "dfi/analysis/ddtree.h"
#include "dfi/session/records.h"

namespace dfi::engine {

// The DDTree-N step at teacher-forced step `tf` (whose top-k holds k entries a slot) and its
// tree (analysis::stepTree); throws dfi::Error when the step carries another number of top-k
// entries.
std::pair<session::StepRecord, session::TreeRecord> ddtreeStep(const session::StepRecord& tf, int k, int budget);
// The same over a tree built otherwise (DsparkHeads::tree: a Markov drafter's slots depend on
// the branch, which the step's per-slot top-k cannot hold).
std::pair<session::StepRecord, session::TreeRecord> ddtreeStep(const session::StepRecord& tf,
                                                               const analysis::DDTree& tree);

}  // namespace dfi::engine
